import type { ChainClient } from "../chain/chain-client";
import { describeStandard } from "../chain/standard-guard";
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
        {
          path: "tokenId",
          message: `required: ${contractAddress} is ${describeStandard("erc1155")} (say which edition)`,
        },
      ]);
    return { standard, tokenId };
  }
  if (tokenId !== undefined)
    throw invalid([
      {
        path: "tokenId",
        message: `not taken here: ${contractAddress} is ${describeStandard("erc721")} (tokenId is for ERC-1155 editions)`,
      },
    ]);
  return { standard, tokenId };
}
