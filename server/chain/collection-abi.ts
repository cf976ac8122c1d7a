import type { NFTCollection, NFTCollectionInterface } from "../../typechain-types/contracts/NFTCollection";
import { collectionInterface } from "./collection";
import { encoderOf, type ViewArgsOf, type ViewNames, type ViewResultOf } from "./typed-abi";

/** The collection's (ERC-721) functions, typed from TypeChain's bindings (typed-abi.ts). */

/** The names of the collection's view functions. */
export type CollectionView = ViewNames<NFTCollection>;
export type ViewArgs<K extends CollectionView> = ViewArgsOf<NFTCollection, K>;
export type ViewResult<K extends CollectionView> = ViewResultOf<NFTCollection, K>;

/**
 * The collection's calldata as TypeChain types it: encodeFunctionData("mint", [amount]) is
 * checked. Encoded by a codec per function (call-codec.ts), made once.
 */
export const collectionCalls = encoderOf<NFTCollectionInterface>(collectionInterface);
