import { z } from "zod";
import { JobApprovalPlan } from "../../approvals";
import "../../http/openapi";

const decimal = z.string().regex(/^\d+$/);
const JobError = z.object({ code: z.string(), message: z.string() });
export const JobStatusSchema = z
  .enum(["awaiting_approval", "running", "paused", "completed", "failed", "cancelled"])
  .openapi({
    description:
      "awaiting_approval: its key's approval rule holds it until POST /approvals/{approvalId}/approve (then running) or …/reject (cancelled, APPROVAL_REJECTED)",
  });
export const RowStatusSchema = z.enum(["pending", "sent", "confirmed", "failed"]);

export const JobPlanView = z
  .object({
    jobId: z.string().optional(),
    status: z.enum(["running", "awaiting_approval"]).optional(),
    approvalId: z
      .string()
      .optional()
      .openapi({ description: "awaiting_approval: POST /approvals/{approvalId}/approve or …/reject decides it" }),
    plan: JobApprovalPlan.optional().openapi({ description: "awaiting_approval: what the approval shows" }),
    dryRun: z.literal(true).optional(),
    approvalRequired: z.literal(true).optional().openapi({
      description:
        "dryRun: this key's approval rule would hold the job (made, it waits for POST /approvals/{id}/approve)",
    }),
    rows: z
      .number()
      .int()
      .openapi({ description: "Distinct addresses (duplicates merged), per edition on an edition contract" }),
    batches: z.number().int(),
    estimatedGas: decimal,
    estimatedCostWei: decimal,
    maxGasPerTx: decimal,
  })
  .openapi("JobPlan");

export const BatchView = z.object({
  index: z.number().int(),
  rows: z.number().int(),
  status: z.enum(["pending", "sending", "sent", "confirmed", "failed", "cancelled"]),
  operationId: z.string().nullable(),
  gasUsed: decimal.nullable(),
  weiSpent: decimal.nullable(),
  error: JobError.optional(),
});

export const JobView = z
  .object({
    jobId: z.string(),
    chainId: z.string().openapi({ description: "The chain the job runs on (decimal id)" }),
    kind: z.enum(["airdrop", "whitelist"]),
    status: JobStatusSchema,
    contractAddress: z.string(),
    from: z.string(),
    rows: z.number().int(),
    rowsByState: z.object({
      pending: z.number().int(),
      sent: z.number().int(),
      confirmed: z.number().int(),
      failed: z.number().int(),
    }),
    batchCount: z.number().int(),
    estimatedGas: decimal,
    estimatedCostWei: decimal,
    gasUsed: decimal.optional(),
    weiSpent: decimal.optional(),
    batches: z.array(BatchView).optional(),
    error: JobError.optional().openapi({
      description: "Why it paused or ended (APPROVAL_REJECTED, APPROVAL_EXPIRED: cancelled before any batch was sent)",
    }),
    approvalId: z.string().optional().openapi({ description: "The approval its key's rule made it wait for" }),
    createdAt: z.string(),
    updatedAt: z.string(),
    finishedAt: z.string().nullable(),
  })
  .openapi("Job");

export const RowView = z
  .object({
    row: z.number().int().openapi({ description: "The input row it first came from (the file's row for a CSV)" }),
    address: z.string(),
    amount: decimal.optional(),
    tokenId: decimal.optional().openapi({ description: "The edition the row mints (an ERC-1155 edition contract)" }),
    status: RowStatusSchema,
    tokenIds: z.array(decimal).optional(),
    state: z.enum(["whitelisted", "alreadyListed"]).optional(),
    error: JobError.optional(),
  })
  .openapi("JobRow");

export const Limit = z.coerce.number().int().min(1).max(500).default(100);
export const Cursor = z
  .string()
  .regex(/^\d{1,19}$/, "cursor must come from a previous page")
  .optional();
