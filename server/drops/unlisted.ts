import type { ChainClient } from "../chain/chain-client";
import { collectionCalls } from "../chain/collection-abi";
import { toChainApiError } from "../chain/chain-errors";
import { ApiError } from "../http/errors";

/**
 * Which of `accounts` the whitelist of collection `at` does not hold yet, for a batch whitelist
 * signed by `signer` (POST /nft/addToWhitelist and each batch of a whitelist job). The owner is
 * checked first, so another key costs one call, not one per address; then every `whitelisted` is
 * read in JSON-RPC batches (100 calls per HTTP request), not one request per address.
 */
export async function unlistedFor(
  chain: ChainClient,
  at: string,
  signer: string,
  accounts: string[],
): Promise<{ unlisted: string[]; listed: string[] }> {
  const owner = await chain.read(at, () => chain.view(at, "owner", []));
  if (owner.toLowerCase() !== signer.toLowerCase()) {
    throw new ApiError(
      "NOT_CONTRACT_OWNER",
      `Only the owner of collection ${at}, ${owner}, may do this; the caller is ${signer}: sign as the owner`,
    );
  }
  const calls = accounts.map((account): [string, unknown[]] => [
    "eth_call",
    [{ to: at, data: collectionCalls().encodeFunctionData("whitelisted", [account]) }, "latest"],
  ]);
  const answers = await chain.read(at, () => chain.rpc.batch(calls));
  const unlisted: string[] = [];
  const listed: string[] = [];
  answers.forEach((answer, i) => {
    if ("error" in answer) throw toChainApiError(chain.rpc.errorOf(...calls[i], answer));
    const word = answer.result;
    if (typeof word !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(word))
      throw new ApiError("UNSUPPORTED_CONTRACT", `whitelisted(address) of ${at} answered no bool`);
    (BigInt(word) === 0n ? unlisted : listed).push(accounts[i]);
  });
  return { unlisted, listed };
}
