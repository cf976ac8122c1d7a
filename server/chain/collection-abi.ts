import type { NFTCollection, NFTCollectionInterface } from "../../typechain-types/contracts/NFTCollection";
import type { TypedContractMethod } from "../../typechain-types/common";
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

/** The collection ABI as TypeChain types it: encodeFunctionData("mint", [amount]) is checked. */
export function collectionCalls(): NFTCollectionInterface {
  return collectionInterface() as unknown as NFTCollectionInterface;
}
