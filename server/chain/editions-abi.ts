import type { NFTEditions, NFTEditionsInterface } from "../../typechain-types/contracts/NFTEditions";
import type { TypedContractMethod } from "../../typechain-types/common";
import { callCodec, type CallCodec } from "./call-codec";
import { editionsInterface } from "./editions";

/**
 * The editions contract's functions, typed from TypeChain's bindings as collection-abi.ts types the
 * ERC-721's: a misspelt function or a wrong argument is a compile error. Types only.
 */

/** The names of the editions contract's view functions. */
export type EditionView = {
  [K in keyof NFTEditions & string]: NFTEditions[K] extends TypedContractMethod<infer _A, infer _R, "view"> ? K : never;
}[keyof NFTEditions & string];

export type EditionViewArgs<K extends EditionView> =
  NFTEditions[K] extends TypedContractMethod<infer A, infer _R, "view"> ? A : never;

export type EditionViewResult<K extends EditionView> =
  NFTEditions[K] extends TypedContractMethod<infer _A, infer R, "view"> ? (R extends [infer Only] ? Only : R) : never;

type CallEncoder = Pick<NFTEditionsInterface, "encodeFunctionData">;
let calls: CallEncoder | undefined;

/** The editions contract's calldata as TypeChain types it, encoded by a codec per function, made once. */
export function editionsCalls(): CallEncoder {
  if (!calls) {
    const codecs = new Map<string, CallCodec>();
    const encode = (name: string, args: readonly unknown[] = []) => {
      let codec = codecs.get(name);
      if (!codec) {
        codec = callCodec(editionsInterface().getFunction(name)!);
        codecs.set(name, codec);
      }
      return codec.encode(args);
    };
    calls = { encodeFunctionData: encode as CallEncoder["encodeFunctionData"] };
  }
  return calls;
}
