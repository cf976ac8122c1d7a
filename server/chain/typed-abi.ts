import type { Interface } from "ethers";
import type { TypedContractMethod } from "../../typechain-types/common";
import { callCodec, type CallCodec } from "./call-codec";

/**
 * A contract's functions typed from TypeChain's bindings of its compiled ABI (C, the contract's
 * type): a misspelt function or a wrong argument is a compile error, not a run-time 500. Types
 * only; nothing of TypeChain runs. collection-abi.ts and editions-abi.ts apply them.
 */

/** The names of C's view functions. */
export type ViewNames<C> = {
  [K in keyof C & string]: C[K] extends TypedContractMethod<infer _A, infer _R, "view"> ? K : never;
}[keyof C & string];

export type ViewArgsOf<C, K extends keyof C> = C[K] extends TypedContractMethod<infer A, infer _R, "view"> ? A : never;

export type ViewResultOf<C, K extends keyof C> =
  C[K] extends TypedContractMethod<infer _A, infer R, "view"> ? (R extends [infer Only] ? Only : R) : never;

/**
 * A codec per function of `iface`, made on first use and kept: ethers' Interface hashes the
 * selector and builds its coders again for every call.
 */
export function codecsOf(iface: () => Interface): (name: string) => CallCodec {
  const codecs = new Map<string, CallCodec>();
  return (name) => {
    let codec = codecs.get(name);
    if (!codec) {
      codec = callCodec(iface().getFunction(name)!);
      codecs.set(name, codec);
    }
    return codec;
  };
}

/** `encodeFunctionData` as TypeChain types it for the contract E encodes, through `codecsOf`. */
export function encoderOf<E extends { encodeFunctionData: unknown }>(
  iface: () => Interface,
): () => Pick<E, "encodeFunctionData"> {
  let encoder: Pick<E, "encodeFunctionData"> | undefined;
  return () => {
    if (!encoder) {
      const codec = codecsOf(iface);
      const encode = (name: string, args: readonly unknown[] = []) => codec(name).encode(args);
      encoder = { encodeFunctionData: encode as E["encodeFunctionData"] };
    }
    return encoder;
  };
}
