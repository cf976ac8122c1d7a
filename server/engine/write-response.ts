import { z } from "zod";
import "../http/openapi";
import type { Receipt } from "../chain/receipt";
import type { Operation } from "./operation";
import { currentTransaction } from "./operation";

/**
 * The answers of every write, in one place: their schemas (for the OpenAPI document) and the
 * builders of their bodies (for the routes, the follower and Idempotency-Key replays alike).
 */

const operationId = z.string().openapi({ description: "GET /nft/operations/{operationId} follows it" });
const chainId = z.string().openapi({ description: "The chain the operation is on (decimal id)", example: "31337" });

/** Fields every confirmed write carries. */
export const ConfirmedWriteFields = z.object({
  status: z.literal("confirmed"),
  operationId,
  chainId,
  transactionHash: z.string(),
  blockNumber: z.number().int(),
  from: z.string(),
  contractAddress: z.string(),
  gasUsed: z.string(),
});

export const PendingWrite = z
  .object({
    status: z.literal("pending"),
    operationId,
    chainId,
    transactionHash: z.string(),
    from: z.string(),
    contractAddress: z.string(),
  })
  .openapi("PendingWrite", {
    description: "Sent, not confirmed within TX_TIMEOUT_MS (or the broadcast's answer was lost); it is followed on",
  });

/** What a held write would send, as a person deciding on it reads it (API.md, "Approvals"). */
export const ApprovalPlan = z
  .object({
    operation: z.string().openapi({ example: "setCost" }),
    call: z.object({ from: z.string(), to: z.string().nullable(), data: z.string(), value: z.string() }),
    chain: z.object({ id: z.string(), name: z.string() }),
    collection: z.string().nullable().openapi({ description: "The collection acted on; null for a deployment" }),
    value: z.string().openapi({ description: "What the call pays, in wei" }),
    gas: z.string().openapi({ description: "The gas its simulation used (with the margin a send adds)" }),
    context: z.record(z.string(), z.unknown()).openapi({ description: "The answer's fields the plan already knows" }),
    requestedBy: z.object({ keyId: z.string(), name: z.string() }).openapi({ description: "The key that asked" }),
  })
  .openapi("ApprovalPlan");

export const AwaitingApproval = z
  .object({
    status: z.literal("awaiting_approval"),
    operationId,
    chainId,
    approvalId: z.string().openapi({ description: "POST /approvals/{approvalId}/approve or …/reject decides it" }),
    plan: ApprovalPlan,
  })
  .openapi("AwaitingApproval", {
    description: "Held by the key's approval rule: simulated, nothing signed or sent, until a person decides",
  });

/** The 202 body of a write held for approval (a replay of its Idempotency-Key answers it while it waits). */
export function awaitingApprovalBody(
  op: Pick<Operation, "id" | "chainId">,
  approvalId: string,
  plan: z.infer<typeof ApprovalPlan>,
): string {
  return JSON.stringify({ status: "awaiting_approval", operationId: op.id, chainId: op.chainId, approvalId, plan });
}

/** The success schema of a write route: the common fields and the route's own. */
export const writeResponseSchema = (extra: z.ZodRawShape) => ConfirmedWriteFields.extend(extra);

/** A setter's success schema: the write fields are absent when nothing changed and nothing was sent. */
export function settingResponseSchema(extra: z.ZodRawShape) {
  return writeResponseSchema({ ...extra, changed: z.boolean() }).partial({
    status: true,
    transactionHash: true,
    blockNumber: true,
    from: true,
    contractAddress: true,
    gasUsed: true,
  });
}

/** The 200/201 body of a confirmed operation, serialised once: replays answer these same bytes. */
export function confirmedBody(op: Operation, receipt: Receipt, result: Record<string, unknown>): string {
  return JSON.stringify({
    status: "confirmed",
    operationId: op.id,
    chainId: op.chainId,
    transactionHash: receipt.hash,
    blockNumber: receipt.blockNumber,
    from: op.from,
    contractAddress: receipt.contractAddress ?? op.contractAddress,
    gasUsed: receipt.gasUsed.toString(),
    ...result,
  });
}

/** The body of a write that needed no transaction (a setting already in force). */
export function unchangedBody(op: Pick<Operation, "id" | "chainId">, fields: Record<string, unknown>): string {
  return JSON.stringify({ operationId: op.id, chainId: op.chainId, ...fields, changed: false });
}

/** The 202 body of an operation still in flight. */
export function pendingBody(op: Operation): string {
  return JSON.stringify({
    status: "pending",
    operationId: op.id,
    chainId: op.chainId,
    transactionHash: currentTransaction(op)?.hash,
    from: op.from,
    contractAddress: op.contractAddress,
  });
}

/** GET /nft/operations/{operationId}. */
export const OperationView = z
  .object({
    operationId: z.string(),
    chainId,
    operation: z.string().openapi({ example: "mint" }),
    status: z.enum(["queued", "sent", "confirmed", "failed", "awaiting_approval"]),
    from: z.string(),
    contractAddress: z.string().optional(),
    nonce: z.number().int().optional(),
    transactionHash: z.string().optional(),
    transactionHashes: z.array(z.string()),
    blockNumber: z.number().int().optional(),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
    final: z.boolean().openapi({
      description: "Its block is final (the node's finalized block, or FINALITY_BLOCKS deep): no reorg can undo it",
    }),
    reorgs: z.number().int().openapi({ description: "How many times a reorg undid it (webhook operation.reorged)" }),
    via: z.literal("mcp").optional().openapi({ description: "mcp: made by a tool of the MCP server (/mcp)" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Operation");

/** What the view shows of an operation: all an operation event's snapshot keeps of it (server/webhooks/render.ts). */
export type ViewedOperation = Pick<
  Operation,
  | "id"
  | "chainId"
  | "operation"
  | "status"
  | "from"
  | "contractAddress"
  | "nonce"
  | "transactions"
  | "blockNumber"
  | "result"
  | "error"
  | "final"
  | "reorgs"
  | "via"
  | "createdAt"
  | "updatedAt"
>;

export function operationView(op: ViewedOperation): z.infer<typeof OperationView> {
  const current = currentTransaction(op);
  return {
    operationId: op.id,
    chainId: op.chainId,
    operation: op.operation,
    status: op.status,
    from: op.from,
    ...(op.contractAddress ? { contractAddress: op.contractAddress } : {}),
    ...(op.nonce !== null ? { nonce: op.nonce } : {}),
    ...(current ? { transactionHash: current.hash } : {}),
    transactionHashes: op.transactions.map((tx) => tx.hash),
    ...(op.blockNumber !== null ? { blockNumber: op.blockNumber } : {}),
    ...(op.result ? { result: op.result } : {}),
    ...(op.error ? { error: op.error } : {}),
    final: op.final,
    reorgs: op.reorgs,
    ...(op.via === "mcp" ? { via: "mcp" as const } : {}),
    createdAt: op.createdAt.toISOString(),
    updatedAt: op.updatedAt.toISOString(),
  };
}
