import { ApiError } from "../http/errors";
import { toChainApiError } from "../chain/chain-errors";
import type { Rpc } from "../chain/rpc";

/**
 * What became of one eth_sendRawTransaction. Only a node's own refusal, or a connection that was
 * never made, proves a transaction is not in the mempool; any other failure is `lost`: it may be
 * there, and only the chain can tell later.
 */
export type BroadcastOutcome =
  | { kind: "accepted" }
  | { kind: "lost"; reason: string }
  | { kind: "unreachable"; error: ApiError }
  | { kind: "nonceTooLow" }
  | { kind: "nonceTooHigh" }
  | { kind: "underpriced" }
  | { kind: "replacementUnderpriced" }
  | { kind: "refused"; error: ApiError };

const KNOWN = /already known|known transaction|already imported|already in (the )?(mempool|pool)/i;
const TOO_LOW = /nonce too low|nonce has already been used|nonce is too low|invalid nonce.*lower/i;
const TOO_HIGH = /nonce too high|nonce.*gap|can't be queued/i;
const REPLACEMENT = /replacement (transaction )?underpriced/i;
const UNDERPRICED = /underpriced|fee too low|gas price too low|too low for the next block|less than block base fee/i;

/**
 * Sends a signed transaction and classifies the answer; never throws. A lost answer is asked again
 * once with the same transaction (a kept-alive connection the server had just closed, say): the
 * node then says it knows it, or takes it. Any other answer to that second try is no proof the
 * first did not land (it may even be mined), so it stays `lost` for the follower to settle.
 */
export async function broadcast(rpc: Rpc, raw: string, nonce = 0): Promise<BroadcastOutcome> {
  const first = await send(rpc, raw, nonce);
  if (first.kind !== "lost") return first;
  const second = await send(rpc, raw, nonce);
  return second.kind === "accepted" ? second : first;
}

/** One eth_sendRawTransaction, in a JSON-RPC batch with those sent at the same moment (lowest nonce first). */
async function send(rpc: Rpc, raw: string, nonce: number): Promise<BroadcastOutcome> {
  let answer;
  try {
    answer = await rpc.queue("eth_sendRawTransaction", [raw], nonce);
  } catch (err) {
    if ((err as { code?: string }).code === "ECONNREFUSED") {
      return { kind: "unreachable", error: new ApiError("CHAIN_UNAVAILABLE", "The JSON-RPC endpoint does not answer") };
    }
    const { code, message } = err as { code?: string; message?: string };
    return { kind: "lost", reason: `${code ?? "error"}: ${String(message ?? "").slice(0, 120)}` };
  }
  if ("result" in answer) return { kind: "accepted" };
  const message = answer.error.message;
  if (KNOWN.test(message)) return { kind: "accepted" };
  if (TOO_LOW.test(message)) return { kind: "nonceTooLow" };
  if (TOO_HIGH.test(message)) return { kind: "nonceTooHigh" };
  if (REPLACEMENT.test(message)) return { kind: "replacementUnderpriced" };
  if (UNDERPRICED.test(message)) return { kind: "underpriced" };
  const error = toChainApiError(rpc.errorOf("eth_sendRawTransaction", [raw], answer));
  return { kind: "refused", error: error.code === "INTERNAL_ERROR" ? refusedBy(message) : error };
}

function refusedBy(message: string): ApiError {
  return new ApiError("CONTRACT_REVERTED", `The node refused the transaction: ${message.slice(0, 200)}`);
}
