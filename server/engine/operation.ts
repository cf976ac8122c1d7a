import type { ErrorCode } from "../http/errors";

/**
 * An operation is one write the service sends for a request, stored before its transaction is
 * broadcast. This file is the lifecycle in one place: every state an operation can be in.
 *
 *   queued    recorded and signed; the broadcast has not been answered yet
 *   sent      broadcast (or its answer was lost): the follower watches it until it is final
 *   confirmed mined and CONFIRMATIONS deep (or a no-op that needed no transaction)
 *   failed    reverted on chain (CONTRACT_REVERTED) or given up (TRANSACTION_ABANDONED); a held
 *             write rejected (APPROVAL_REJECTED), expired (APPROVAL_EXPIRED) or refused when approved
 *   awaiting_approval  held by its key's approval rule: simulated, not signed, no nonce; final (the
 *             follower leaves it) until approved, when it becomes queued as a new write would
 *
 * A confirmed or failed operation with a block is still followed until that block is final: a reorg
 * that removes its receipt sends it back to sent (`reorgs` counts it). `final` marks the end.
 */
export type OperationStatus = "queued" | "sent" | "confirmed" | "failed" | "awaiting_approval";

export const UNFINISHED: readonly OperationStatus[] = ["queued", "sent"];

/** One signed transaction of an operation; a fee bump adds another at the same nonce. */
export interface SignedTransaction {
  hash: string;
  raw: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  gasPrice?: string;
  /**
   * A replacement stored before its broadcast, until the node's answer: no operation.replaced is
   * written for it while set (migration 13), and none at all if the node refuses it.
   */
  unsent?: true;
}

/**
 * What an operation answers on failure: an API error code and its message (CONTRACT_REVERTED,
 * TRANSACTION_ABANDONED; APPROVAL_REJECTED, APPROVAL_EXPIRED or a simulation's refusal for a held write).
 */
export interface OperationError {
  code: ErrorCode;
  message: string;
}

export interface Operation {
  id: string;
  chainId: string;
  from: string;
  /** The route's operation name: "mint", "setPaused", …; "nonceFill" for a gap filled by the service. */
  operation: string;
  /** The collection acted on; for a deployment, the address it gets. */
  contractAddress: string | null;
  fingerprint: string;
  idempotencyKey: string | null;
  status: OperationStatus;
  nonce: number | null;
  call: { to: string | null; data: string; value: bigint; gasLimit: bigint } | null;
  transactions: SignedTransaction[];
  /** Response fields known when the request was made (the price paid, the receiver, …). */
  context: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: OperationError | null;
  response: { status: number; body: string } | null;
  blockNumber: number | null;
  blockHash: string | null;
  /** The chain head when its current transaction was first seen unmined: the resend clock. */
  pendingSince: number | null;
  /** The wall time of that clock: it runs on a chain that mines nothing too. */
  pendingSinceAt: Date | null;
  /** Its block is final (or it has none: a no-op, abandoned): it is followed no more. */
  final: boolean;
  /** How many times a reorg undid it. */
  reorgs: number;
  /** The access key that made it ("root" for API_KEY); null for a request key in open mode. */
  accessKeyId: string | null;
  /** "mcp" when an MCP tool made it (server/mcp); null or unset for a plain HTTP request. */
  via?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The transaction currently standing for the operation (the latest signed). */
export function currentTransaction(op: Pick<Operation, "transactions">): SignedTransaction | undefined {
  return op.transactions[op.transactions.length - 1];
}
