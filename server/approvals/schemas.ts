import { z } from "zod";
import { ApprovalPlan, ConfirmedWriteFields } from "../engine";
import "../http/openapi";
import { PageQuery } from "../http/paging";

const keyRef = z.object({ keyId: z.string(), name: z.string() });

export const ApprovalView = z
  .object({
    id: z.string().openapi({ example: "apr_3f9a1c0d2b4e6f8a0c1e3d5b" }),
    status: z.enum(["pending", "approved", "rejected", "expired"]),
    operationId: z
      .string()
      .openapi({ description: "GET /nft/operations/{operationId}: awaiting_approval while pending" }),
    chainId: z.string(),
    plan: ApprovalPlan,
    requestedBy: keyRef.openapi({ description: "The key that asked" }),
    createdAt: z.string(),
    expiresAt: z.string().openapi({ description: "Undecided then, the write fails with APPROVAL_EXPIRED" }),
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
