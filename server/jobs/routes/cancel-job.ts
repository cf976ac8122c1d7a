import type Router from "@koa/router";
import { auditActor } from "../../access";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { FINISHED } from "../job-store";
import { admitWrite, JobParams, jobOfPath, jobView, requireKind, type JobRouteDeps } from "./deps";
import { JobView } from "./schemas";

/**
 * POST /jobs/{id}/cancel: batches not yet sent are never sent. Every broadcast of a job's batch takes
 * the job's row lock and checks its status under it (resend-guard.ts), as this cancel takes the lock
 * to cancel it: once the cancel has committed, no broadcast of the job can start, so it answers at
 * once. Batches already sent are followed to their end. A job awaiting approval closes its approval
 * in the same transaction: rejected, decided by the cancelling key, out of the pending list.
 */
export function mountCancelJob(router: Router, deps: JobRouteDeps): void {
  router.post("/jobs/:id/cancel", async (ctx) => {
    const canceller = await admitWrite(ctx, deps);
    const found = await jobOfPath(ctx, deps);
    requireKind(ctx, deps, found.kind, found.contractAddress);
    deps.access.checkWallet(ctx, found.from);
    const approvals = deps.approvals;
    await deps.store.db.transaction(async (tx) => {
      // Its approval closes with it (rejected, by this key), taken before the job's row as a
      // decision or the expiry sweep takes them: a cancel and an approve never wait on each other.
      if (found.status === "awaiting_approval" && found.approvalId && approvals)
        await approvals.desk.closeForCancelledJobIn(tx, auditActor(ctx), canceller, found.approvalId);
      const job = (await deps.store.lock(tx, found.id))!;
      if (FINISHED.includes(job.status))
        throw new ApiError("JOB_NOT_RUNNABLE", `The job is ${job.status} already; there is nothing to cancel`);
      await tx.query("UPDATE jobs SET status = 'cancelled', updated_at = now(), finished_at = now() WHERE id = $1", [
        job.id,
      ]);
      await tx.query("UPDATE job_batches SET status = 'cancelled' WHERE job_id = $1 AND status = 'pending'", [job.id]);
    });
    ctx.body = await jobView(deps, (await deps.store.find(found.id))!);
  });
}

export function registerCancelJobOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/jobs/{id}/cancel",
    operationId: "cancelJob",
    tags: ["jobs"],
    summary:
      "Cancel a job: batches not yet sent are never sent; a job awaiting approval closes its approval (rejected)",
    security: [{ AccessKey: [] }],
    request: { params: JobParams },
    responses: {
      200: { description: "The job, cancelled", content: { "application/json": { schema: JobView } } },
      400: errorResponse("VALIDATION_ERROR: the id is 1 to 100 characters"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("JOB_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
      409: errorResponse("JOB_NOT_RUNNABLE"),
    },
  });
}
