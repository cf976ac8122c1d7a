import type { ChainClient, Standard } from "../chain/chain-client";
import { ApiError } from "../http/errors";
import { invalid } from "../http/validation";
import { uint } from "./fields";

/**
 * One schema per route serves both standards: `tokenId` is optional in it, and whether it must be
 * there is checked here against what the address holds (ChainClient.standardOf, read once).
 */

/** A request's `tokenId` on a route that takes one for editions only. */
export const editionTokenId = uint("tokenId").optional().openapi({
  description:
    "The edition (ERC-1155 token id): required on an ERC-1155 editions contract, refused on an ERC-721 collection",
  example: "1",
});

const NAMES: Record<Standard, string> = { erc721: "an ERC-721 collection", erc1155: "an ERC-1155 edition contract" };

/**
 * The standard of `contractAddress`, with `tokenId` checked against it: required on an edition
 * contract, refused on an ERC-721 (400 VALIDATION_ERROR naming tokenId). Answers the token id of an
 * edition, undefined for an ERC-721.
 */
export async function tokenIdFor(
  chain: ChainClient,
  contractAddress: string,
  tokenId: bigint | undefined,
): Promise<{ standard: "erc721"; tokenId: undefined } | { standard: "erc1155"; tokenId: bigint }> {
  const standard = await chain.standardOf(contractAddress);
  if (standard === "erc1155") {
    if (tokenId === undefined)
      throw invalid([
        { path: "tokenId", message: `required: ${contractAddress} is ${NAMES.erc1155} (say which edition)` },
      ]);
    return { standard, tokenId };
  }
  if (tokenId !== undefined)
    throw invalid([
      {
        path: "tokenId",
        message: `not taken here: ${contractAddress} is ${NAMES.erc721} (tokenId is for ERC-1155 editions)`,
      },
    ]);
  return { standard, tokenId };
}

/** 400 VALIDATION_ERROR unless `contractAddress` holds ERC-1155 editions: `what` (a route, a feature) is for editions only. */
export async function requireEditions(chain: ChainClient, contractAddress: string, what: string): Promise<void> {
  const standard = await chain.standardOf(contractAddress);
  if (standard !== "erc1155")
    throw new ApiError("VALIDATION_ERROR", `${what} is ERC-1155 only; ${contractAddress} is ${NAMES[standard]}`, [
      { path: "contractAddress", message: `${NAMES[standard]}, not an ERC-1155 edition contract` },
    ]);
}

/** 400 VALIDATION_ERROR when `contractAddress` holds ERC-1155 editions: `what` is for ERC-721 collections only. */
export async function requireErc721(chain: ChainClient, contractAddress: string, what: string): Promise<void> {
  if ((await chain.standardOf(contractAddress)) === "erc1155")
    throw new ApiError("VALIDATION_ERROR", `${what} ERC-721 only; ${contractAddress} is ${NAMES.erc1155}`, [
      { path: "contractAddress", message: `${NAMES.erc1155}, not an ERC-721 collection` },
    ]);
}
