import type { ChainClient } from "../chain/chain-client";
import { ApiError } from "../http/errors";

/**
 * Hosted metadata of an ERC-1155 edition contract: documents per edition id, served as uploaded
 * once the edition has a token (no provenance, no reveal: each edition's document is its own).
 */

/**
 * Whether edition `tokenId` of `address` has a token: what "minted" means for an edition, whose
 * document, as an ERC-721 token's, is not shown before it exists. A contract without
 * totalSupply(id) cannot tell: its documents are served (the owner uploaded them to be).
 */
export async function editionMinted(chain: ChainClient, address: string, tokenId: bigint): Promise<boolean> {
  try {
    return (await chain.read(address, () => chain.viewEdition(address, "totalSupply(uint256)", [tokenId]))) > 0n;
  } catch (err) {
    if (err instanceof ApiError && err.code === "CHAIN_UNAVAILABLE") throw err;
    return true;
  }
}

/**
 * 409 for a step of the fair reveal (`what`: the route) on an edition contract, naming the standard:
 * PROVENANCE_NOT_SET, the API's code for a reveal with no provenance, which an edition never has.
 */
export function noReveal(what: string, address: string): ApiError {
  return new ApiError(
    "PROVENANCE_NOT_SET",
    `${what} has no reveal: ${address} is an ERC-1155 edition contract (its documents are served per edition id ` +
      "as uploaded, with no provenance to commit and nothing to reveal)",
  );
}
