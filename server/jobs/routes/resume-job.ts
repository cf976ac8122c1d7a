import type Router from "@koa/router";
import { ApiError } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { admitWrite, JobParams, jobOfPath, jobView, requireKind, type JobRouteDeps } from "./deps";
import { JobView } from "./schemas";

/** POST /jobs/{id}/resume: a paused job runs again (its batch that would have reverted is tried anew). */
export function mountResumeJob(router: Router, deps: JobRouteDeps): void {
  router.post("/jobs/:id/resume", async (ctx) => {
    await admitWrite(ctx, deps);
    const found = await jobOfPath(ctx, deps);
    requireKind(ctx, deps, found.kind, found.contractAddress);
    deps.access.checkWallet(ctx, found.from);
    const job = await deps.store.db.transaction(async (tx) => {
      const job = (await deps.store.lock(tx, found.id))!;
      if (job.status !== "paused")
        throw new ApiError("JOB_NOT_RUNNABLE", `The job is ${job.status}; only a paused job can be resumed`);
      await tx.query("UPDATE jobs SET status = 'running', error = NULL, updated_at = now() WHERE id = $1", [job.id]);
      return (await deps.store.find(job.id, tx))!;
    });
    deps.runner.kick();
    ctx.body = await jobView(deps, job);
  });
}

export function registerResumeJobOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "post",
    path: "/jobs/{id}/resume",
    operationId: "resumeJob",
    tags: ["jobs"],
    summary: "Run a paused job again (after, say, a fix on chain)",
    security: [{ AccessKey: [] }],
    request: { params: JobParams },
    responses: {
      200: { description: "The job, running", content: { "application/json": { schema: JobView } } },
      400: errorResponse("VALIDATION_ERROR: the id is 1 to 100 characters"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("JOB_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
      409: errorResponse("JOB_NOT_RUNNABLE"),
    },
  });
}
