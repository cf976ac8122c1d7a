import type { NFTCollection, NFTCollectionInterface } from "../../typechain-types/contracts/NFTCollection";
import type { TypedContractMethod } from "../../typechain-types/common";
import { callCodec, type CallCodec } from "./call-codec";
import { collectionInterface } from "./collection";

/**
 * The collection's functions, typed from TypeChain's bindings of the compiled ABI: a misspelt
 * function or a wrong argument is a compile error, not a run-time 500. Types only; nothing of
 * TypeChain runs.
 */

/** The names of the collection's view functions. */
export type CollectionView = {
  [K in keyof NFTCollection & string]: NFTCollection[K] extends TypedContractMethod<infer _A, infer _R, "view">
    ? K
    : never;
}[keyof NFTCollection & string];

export type ViewArgs<K extends CollectionView> =
  NFTCollection[K] extends TypedContractMethod<infer A, infer _R, "view"> ? A : never;

export type ViewResult<K extends CollectionView> =
  NFTCollection[K] extends TypedContractMethod<infer _A, infer R, "view"> ? (R extends [infer Only] ? Only : R) : never;

type CallEncoder = Pick<NFTCollectionInterface, "encodeFunctionData">;
let calls: CallEncoder | undefined;

/**
 * The collection's calldata as TypeChain types it: encodeFunctionData("mint", [amount]) is
 * checked. Encoded by a codec per function (call-codec.ts), made once: ethers' Interface hashes
 * the selector and builds its coders again for every call.
 */
export function collectionCalls(): CallEncoder {
  if (!calls) {
    const codecs = new Map<string, CallCodec>();
    const encode = (name: string, args: readonly unknown[] = []) => {
      let codec = codecs.get(name);
      if (!codec) {
        codec = callCodec(collectionInterface().getFunction(name)!);
        codecs.set(name, codec);
      }
      return codec.encode(args);
    };
    calls = { encodeFunctionData: encode as CallEncoder["encodeFunctionData"] };
  }
  return calls;
}
