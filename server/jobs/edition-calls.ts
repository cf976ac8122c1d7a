import { Interface } from "ethers";
import type { NFTEditionsInterface } from "../../typechain-types/contracts/NFTEditions";
import type { ChainClient } from "../chain/chain-client";
import { ApiError } from "../http/errors";
import { MAX_DETAILS, type JobEntry } from "./rows";

/**
 * The few functions and the event of the reference edition contract (contracts/NFTEditions.sol)
 * that a job uses, typed by TypeChain's binding of it: a misspelt name or a wrong argument is a
 * compile error. Declared here rather than loaded from the artifact: the production build carries
 * the ERC-721 collection's artifact alone.
 */
type EditionJobCalls = Pick<NFTEditionsInterface, "encodeFunctionData" | "decodeFunctionResult">;

let calls: EditionJobCalls | undefined;

export function editionJobCalls(): EditionJobCalls {
  if (!calls) {
    const iface = new Interface([
      "function airdrop(uint256 tokenId, address[] recipients, uint256[] amounts)",
      "function editionCount() view returns (uint256)",
    ]);
    calls = {
      encodeFunctionData: iface.encodeFunctionData.bind(iface) as EditionJobCalls["encodeFunctionData"],
      decodeFunctionResult: iface.decodeFunctionResult.bind(iface) as EditionJobCalls["decodeFunctionResult"],
    };
  }
  return calls;
}

/**
 * 404 TOKEN_NOT_FOUND when an entry names an edition the contract does not have (ids 1 to its
 * editionCount()), naming the rows that do; checked before the job is made, so that no batch waits
 * on an edition that is not there. A contract without editionCount() is not checked here: its batches'
 * simulation tells.
 */
export async function requireEditions(chain: ChainClient, contractAddress: string, entries: JobEntry[]): Promise<void> {
  const ids = new Set(entries.map((e) => e.tokenId).filter((id): id is bigint => id !== undefined));
  if (ids.size === 0) return;
  let count: bigint;
  try {
    const data = editionJobCalls().encodeFunctionData("editionCount");
    const answer = await chain.read(contractAddress, () =>
      chain.rpc.call<string>("eth_call", [{ to: contractAddress, data }, "latest"]),
    );
    count = editionJobCalls().decodeFunctionResult("editionCount", answer)[0] as bigint;
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
