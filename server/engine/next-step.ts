import type { Receipt } from "../chain/receipt";
import type { Operation } from "./operation";

/**
 * What the follower does next with one operation: a pure function of the operation's row and what
 * the chain showed in this pass. Every rule of API.md's "Operations" about an operation after its
 * broadcast is here, in one place; the follower only gathers what the chain shows and carries out
 * the answer. Tested as a table of cases (test/unit/next-step.test.ts).
 */
export type Step =
  /** Nothing to do this pass. */
  | { kind: "wait" }
  /** Mined deep enough: confirmed (or failed CONTRACT_REVERTED for a revert), answered from this receipt. */
  | { kind: "settle"; receipt: Receipt }
  /** Mined, not yet CONFIRMATIONS deep: its block is recorded, so a reorg can be told from a lookup that failed. */
  | { kind: "recordBlock"; receipt: Receipt }
  /** Its block is final: it is followed no more. */
  | { kind: "finalize" }
  /** A reorg removed its receipt (proven by the chain): back to sent, counted, broadcast again. */
  | { kind: "reorged" }
  /** Seen unmined for the first time (or taken over while queued): sent, with its resend clock started. */
  | { kind: "startClock" }
  /** The node does not know its transaction: the stored signed transaction is broadcast again. */
  | { kind: "rebroadcast" }
  /** Unmined past its resend clock: the sender's nonce on chain tells why; read it, then decide again. */
  | { kind: "readNonce" }
  /** Lower nonces of the sender are missing on chain: fill those no operation holds. */
  | { kind: "fillBelow"; chainNonce: number }
  /** Another transaction took its nonce: re-signed at a new nonce (its own can never be mined). */
  | { kind: "resign" }
  /** Its nonce is next and it is still unmined: replaced at the same nonce with higher fees. */
  | { kind: "replace" };

export interface FollowRules {
  /** Blocks deep a receipt must be to confirm (CONFIRMATIONS). */
  confirmations: number;
  /** New blocks an unmined transaction waits before it is looked into (TX_RESEND_BLOCKS). */
  resendBlocks: number;
  /** Or this long, whichever comes first: a node that mines nothing while a gap holds writes back makes no blocks. */
  resendMs: number;
}

/** What the chain showed of one operation in this pass; a field left out was not asked, or not answered. */
export interface Seen {
  head: number;
  /** The highest block taken as final now. */
  finalHeight: number;
  /** Wall time of the pass, in ms. */
  now: number;
  /** The receipt of one of its transactions. */
  receipt?: Receipt;
  /** For one recorded mined whose receipt did not come: what the chain proves of its block. */
  mined?: "mined" | "reorged" | "unknown";
  /** Whether the node knows its current transaction (in its mempool or mined). */
  node?: "known" | "unknown";
  /** The sender's nonce on chain (`latest`), read after this pass's receipts. */
  chainNonce?: number;
}

export type FollowedOperation = Pick<
  Operation,
  "status" | "nonce" | "blockNumber" | "blockHash" | "pendingSince" | "pendingSinceAt" | "final"
>;

export function nextStep(op: FollowedOperation, seen: Seen, rules: FollowRules): Step {
  if (op.final) return { kind: "wait" };
  const finished = op.status === "confirmed" || op.status === "failed";
  const { receipt } = seen;
  if (receipt) {
    const deep = seen.head >= receipt.blockNumber + rules.confirmations - 1;
    if (finished) {
      // Answered already. Another block: a reorg undid it (and mined it again at once): back to sent,
      // then answered again from the new receipt, whose token ids may differ. The same block: final
      // once deep enough.
      if (receipt.blockHash !== op.blockHash) return { kind: "reorged" };
      return receipt.blockNumber <= seen.finalHeight ? { kind: "finalize" } : { kind: "wait" };
    }
    if (deep) return { kind: "settle", receipt };
    return receipt.blockHash === op.blockHash ? { kind: "wait" } : { kind: "recordBlock", receipt };
  }
  if (op.blockNumber !== null) {
    // Recorded mined, no receipt now: only the chain's proof sends it back; a failed lookup proves nothing.
    if (seen.mined === "reorged") return { kind: "reorged" };
    if (finished && seen.mined === "mined" && op.blockNumber <= seen.finalHeight) return { kind: "finalize" };
    return { kind: "wait" };
  }
  // No block: a finished operation without one never sent anything that could be mined (a no-op, abandoned).
  if (finished) return { kind: "finalize" };
  if (op.status === "queued" || op.pendingSince === null) return { kind: "startClock" };
  if (seen.node === "unknown") return { kind: "rebroadcast" };
  const waitedBlocks = seen.head - op.pendingSince;
  const waitedMs = op.pendingSinceAt === null ? Infinity : seen.now - op.pendingSinceAt.getTime();
  if (waitedBlocks < rules.resendBlocks && waitedMs < rules.resendMs) return { kind: "wait" };
  if (seen.chainNonce === undefined) return { kind: "readNonce" };
  if (seen.chainNonce < op.nonce!) return { kind: "fillBelow", chainNonce: seen.chainNonce };
  if (seen.chainNonce > op.nonce!) return { kind: "resign" };
  return { kind: "replace" };
}

/** Whether the node should be asked about the operation's current transaction this pass. */
export function askNode(op: FollowedOperation, seen: Pick<Seen, "head" | "now">, recheckMs: number): boolean {
  if (op.final || op.blockNumber !== null || op.status !== "sent" || op.pendingSince === null) return false;
  const since = op.pendingSinceAt?.getTime() ?? 0;
  return seen.head > op.pendingSince || seen.now - since >= recheckMs;
}
