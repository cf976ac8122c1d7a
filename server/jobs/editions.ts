import type { ChainClient } from "../chain/chain-client";
import { ApiError } from "../http/errors";
import { MAX_DETAILS, type JobEntry } from "./rows";

/**
 * 404 TOKEN_NOT_FOUND when an entry names an edition the contract does not have (ids 1 to its
 * editionCount()), naming the rows that do; checked before the job is made, so that no batch waits
 * on an edition that is not there. A contract without editionCount() is not checked here: its batches'
 * simulation tells.
 */
export async function requireExistingEditions(
  chain: ChainClient,
  contractAddress: string,
  entries: JobEntry[],
): Promise<void> {
  const ids = new Set(entries.map((e) => e.tokenId).filter((id): id is bigint => id !== undefined));
  if (ids.size === 0) return;
  let count: bigint;
  try {
    count = await chain.read(contractAddress, () => chain.viewEdition(contractAddress, "editionCount", []));
  } catch (err) {
    if (err instanceof ApiError && err.code === "CHAIN_UNAVAILABLE") throw err;
    return;
  }
  const missing = entries.filter((e) => e.tokenId !== undefined && (e.tokenId < 1n || e.tokenId > count));
  if (missing.length === 0) return;
  const missingIds = [...new Set(missing.map((e) => e.tokenId!.toString()))];
  throw new ApiError(
    "TOKEN_NOT_FOUND",
    `${contractAddress} has no edition ${missingIds.slice(0, 5).join(", ")}${missingIds.length > 5 ? ", …" : ""}` +
      ` (its editions are 1 to ${count}; create one with POST /nft/createEdition)`,
    missing.slice(0, MAX_DETAILS).map((e) => ({ path: `row ${e.line}`, message: `no edition ${e.tokenId}` })),
  );
}
