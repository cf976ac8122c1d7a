import { ApiError } from "../http/errors";
import type { ChainClient, Standard } from "./chain-client";

/** Features of one standard only: 400 VALIDATION_ERROR naming what the address holds (ChainClient.standardOf, read once). */

const HOLDS: Record<Standard, string> = { erc721: "an ERC-721 collection", erc1155: "an ERC-1155 edition contract" };

/** How `standard` is named in an answer: "an ERC-721 collection", "an ERC-1155 edition contract". */
export function describeStandard(standard: Standard): string {
  return HOLDS[standard];
}

/** 400 naming the standard when `standard` is ERC-1155: `what` ("Allowlists are") is for ERC-721 collections only. */
export function erc721OnlyError(contractAddress: string, what: string): ApiError {
  return new ApiError("VALIDATION_ERROR", `${what} ERC-721 only; ${contractAddress} is ${HOLDS.erc1155}`, [
    { path: "contractAddress", message: `${HOLDS.erc1155}, not an ERC-721 collection` },
  ]);
}

/** 400 VALIDATION_ERROR when `contractAddress` holds ERC-1155 editions: `what` ("Vouchers are") is for ERC-721 only. */
export async function requireErc721(chain: ChainClient, contractAddress: string, what: string): Promise<void> {
  if ((await chain.standardOf(contractAddress)) === "erc1155") throw erc721OnlyError(contractAddress, what);
}

/** 400 VALIDATION_ERROR unless `contractAddress` holds ERC-1155 editions: `what` (a route) is for editions only. */
export async function requireEditions(chain: ChainClient, contractAddress: string, what: string): Promise<void> {
  const standard = await chain.standardOf(contractAddress);
  if (standard !== "erc1155")
    throw new ApiError("VALIDATION_ERROR", `${what} is ERC-1155 only; ${contractAddress} is ${HOLDS[standard]}`, [
      { path: "contractAddress", message: `${HOLDS[standard]}, not an ERC-1155 edition contract` },
    ]);
}
