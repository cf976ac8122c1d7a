import type { NFTEditions, NFTEditionsInterface } from "../../typechain-types/contracts/NFTEditions";
import { editionsInterface } from "./editions";
import { encoderOf, type ViewArgsOf, type ViewNames, type ViewResultOf } from "./typed-abi";

/** The editions contract's (ERC-1155) functions, typed from TypeChain's bindings (typed-abi.ts). */

/** The names of the editions contract's view functions. */
export type EditionView = ViewNames<NFTEditions>;
export type EditionViewArgs<K extends EditionView> = ViewArgsOf<NFTEditions, K>;
export type EditionViewResult<K extends EditionView> = ViewResultOf<NFTEditions, K>;

/** The editions contract's calldata as TypeChain types it, encoded by a codec per function, made once. */
export const editionsCalls = encoderOf<NFTEditionsInterface>(editionsInterface);
