import Router from "@koa/router";
import { z } from "zod";
import { auditActor, type AccessControl, type AccessPrincipal } from "../access";
import { PendingWrite } from "../engine";
import { readJsonBody } from "../http/json-body";
import { errorResponse, type OpenAPIRegistry } from "../http/openapi";
import { pageOf, pageRequest } from "../http/paging";
import { parseBody, parseInput } from "../http/validation";
import { approvalView, type ApprovalDesk } from "./desk";
import { ApprovalParams, ApprovalQuery, ApprovalView, ApprovedJob, ApprovedWrite, RejectRequest } from "./schemas";

const DECIDE = { scope: "approvals:decide", key: "always" } as const;

/** GET /approvals, POST /approvals/{id}/approve, POST /approvals/{id}/reject. */
export function createApprovalRouter(deps: { desk: ApprovalDesk; access: AccessControl }): Router {
  const { desk, access } = deps;
  const router = new Router();

  router.get("/approvals", access.require(DECIDE), async (ctx) => {
    const query = parseInput(ApprovalQuery, ctx.query);
    const page = pageRequest(query);
    await desk.expireDue();
    const rows = await desk.store.list(ctx.state.access as AccessPrincipal, query.status, page);
    const { items, cursor } = pageOf(rows, page.limit, (row) => row.position);
    ctx.body = { approvals: items.map(approvalView), ...(cursor ? { cursor } : {}) };
  });

  router.post("/approvals/:id/approve", access.require(DECIDE), async (ctx) => {
    const { id } = parseInput(ApprovalParams, ctx.params);
    const { answer } = await desk.approve(auditActor(ctx), ctx.state.access as AccessPrincipal, id);
    ctx.status = answer.status;
    ctx.type = "application/json; charset=utf-8";
    ctx.body = answer.body;
  });

  router.post("/approvals/:id/reject", access.require(DECIDE), async (ctx) => {
    const { id } = parseInput(ApprovalParams, ctx.params);
    const { reason } = parseBody(RejectRequest, await readJsonBody(ctx));
    const approval = await desk.reject(auditActor(ctx), ctx.state.access as AccessPrincipal, id, reason);
    ctx.body = approvalView(approval);
  });
  return router;
}

const security = [{ AccessKey: [] }];
const denied = {
  401: errorResponse("UNAUTHORIZED"),
  403: errorResponse("FORBIDDEN"),
  429: errorResponse("RATE_LIMITED"),
};
const decided = {
  404: errorResponse("NOT_FOUND"),
  409: errorResponse("APPROVAL_NOT_PENDING"),
};

export function registerApprovalOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/approvals",
    operationId: "listApprovals",
    tags: ["approvals"],
    summary:
      "Writes and jobs held by their key's approval rule, newest first (scope approvals:decide), within this key's chains, wallets and collections",
    security,
    request: { query: ApprovalQuery },
    responses: {
      200: {
        description: "A page of approvals; `cursor` fetches the next",
        content: {
          "application/json": { schema: z.object({ approvals: z.array(ApprovalView), cursor: z.string().optional() }) },
        },
      },
      400: errorResponse("VALIDATION_ERROR"),
      ...denied,
    },
  });
  registry.registerPath({
    method: "post",
    path: "/approvals/{id}/approve",
    operationId: "approveApproval",
    tags: ["approvals"],
    summary:
      "Approve a held write or job (scope approvals:decide, another key than the one that asked): a write is simulated again and sent as if it had just arrived, its answer the write's; a job starts as if it had just been made (202 with the job)",
    security,
    request: { params: ApprovalParams },
    responses: {
      200: { description: "Sent and confirmed", content: { "application/json": { schema: ApprovedWrite } } },
      201: {
        description: "A deployment, sent and confirmed",
        content: { "application/json": { schema: ApprovedWrite } },
      },
      202: {
        description: "Sent, not yet confirmed: follow operationId; or a job, started: follow jobId",
        content: { "application/json": { schema: z.union([PendingWrite, ApprovedJob]) } },
      },
      400: errorResponse("VALIDATION_ERROR"),
      ...denied,
      ...decided,
      409: errorResponse("APPROVAL_NOT_PENDING, JOB_NOT_RUNNABLE (a held job cancelled while it waited)"),
      402: errorResponse("INSUFFICIENT_FUNDS"),
      422: errorResponse("CONTRACT_REVERTED (the simulation refuses it now: the operation fails with it)"),
      503: errorResponse("CHAIN_UNAVAILABLE, SIGNER_UNAVAILABLE"),
    },
  });
  registry.registerPath({
    method: "post",
    path: "/approvals/{id}/reject",
    operationId: "rejectApproval",
    tags: ["approvals"],
    summary:
      "Reject a held write or job (scope approvals:decide, another key than the one that asked): its operation fails (its job is cancelled, no batch sent) with APPROVAL_REJECTED and the reason",
    security,
    request: {
      params: ApprovalParams,
      body: { required: true, content: { "application/json": { schema: RejectRequest } } },
    },
    responses: {
      200: { description: "Rejected", content: { "application/json": { schema: ApprovalView } } },
      400: errorResponse("VALIDATION_ERROR"),
      ...denied,
      ...decided,
    },
  });
}
