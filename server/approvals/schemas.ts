import { z } from "zod";
import { ApprovalPlan, ConfirmedWriteFields } from "../engine";
import "../http/openapi";
import { PageQuery } from "../http/paging";

const keyRef = z.object({ keyId: z.string(), name: z.string() });
const decimal = z.string().regex(/^\d+$/);

/** What a job held for approval asks for: one approval for all its rows (migration 37). */
export const JobApprovalPlan = z
  .object({
    operation: z.string().openapi({
      example: "airdrop",
      description: "The write its batches make, as a rule's `operations` names it (airdrop, addToWhitelist)",
    }),
    job: z.object({
      jobId: z.string(),
      kind: z.enum(["airdrop", "whitelist"]),
      rows: z.number().int().openapi({ description: "Distinct addresses (duplicates merged)" }),
      batches: z.number().int(),
      totalAmount: decimal.optional().openapi({ description: "An airdrop's tokens minted over all its rows" }),
      largestAmount: decimal.optional().openapi({ description: "An airdrop's largest row" }),
      estimatedGas: decimal,
      estimatedCostWei: decimal,
    }),
    from: z.string().openapi({ description: "The wallet that signs its batches" }),
    chain: z.object({ id: z.string(), name: z.string() }),
    collection: z.string(),
    value: z.string().openapi({ description: "What its calls pay, in wei (0: a job's writes pay nothing)" }),
    requestedBy: keyRef.openapi({ description: "The key that asked" }),
  })
  .openapi("JobApprovalPlan");

/** An approval's plan: a held write's call, or a held job's rows and totals. */
export const ApprovalPlanOf = z.union([ApprovalPlan, JobApprovalPlan]);

export const ApprovalView = z
  .object({
    id: z.string().openapi({ example: "apr_3f9a1c0d2b4e6f8a0c1e3d5b" }),
    status: z.enum(["pending", "approved", "rejected", "expired"]),
    operationId: z.string().optional().openapi({
      description: "A held write: GET /nft/operations/{operationId}, awaiting_approval while pending",
    }),
    jobId: z.string().optional().openapi({
      description: "A held job: GET /jobs/{jobId}, awaiting_approval while pending; approved, it runs",
    }),
    chainId: z.string(),
    plan: ApprovalPlanOf,
    requestedBy: keyRef.openapi({ description: "The key that asked" }),
    createdAt: z.string(),
    expiresAt: z.string().openapi({
      description: "Undecided then, the write fails (the job is cancelled) with APPROVAL_EXPIRED",
    }),
    decidedAt: z.string().optional(),
    decidedBy: keyRef.optional(),
    reason: z.string().optional().openapi({ description: "A rejection's reason" }),
  })
  .openapi("Approval");

export const ApprovalQuery = PageQuery.extend({
  status: z.enum(["pending", "approved", "rejected", "expired"]).optional(),
});

export const ApprovalParams = z.object({
  id: z.string().max(100).openapi({ example: "apr_3f9a1c0d2b4e6f8a0c1e3d5b" }),
});

export const RejectRequest = z
  .object({ reason: z.string().min(1).max(1000).openapi({ example: "Price change not agreed" }) })
  .strict()
  .openapi("RejectApprovalRequest");

/** What an approval answers: the write's own answer, as if it had just arrived (its route's fields besides these). */
export const ApprovedWrite = z
  .looseObject(ConfirmedWriteFields.shape)
  .openapi("ApprovedWrite", { description: "The write, sent and confirmed: its route's answer" });

/** What approving a held job answers: the job, running (as POST /jobs answers a job it starts). */
export const ApprovedJob = z
  .object({
    jobId: z.string(),
    status: z.literal("running"),
    approvalId: z.string(),
    rows: z.number().int(),
    batches: z.number().int(),
    estimatedGas: decimal,
    estimatedCostWei: decimal,
  })
  .openapi("ApprovedJob", { description: "The job, started: follow it with GET /jobs/{jobId}" });
