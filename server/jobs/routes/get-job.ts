import type Router from "@koa/router";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { JobParams, jobOfPath, jobView, READ, type JobRouteDeps } from "./deps";
import { JobView } from "./schemas";

/** GET /jobs/{id}: status, rows by state, batches with their operation, gas and wei. */
export function mountGetJob(router: Router, deps: JobRouteDeps): void {
  router.get("/jobs/:id", deps.access.require(READ), async (ctx) => {
    ctx.body = await jobView(deps, await jobOfPath(ctx, deps));
  });
}

export function registerGetJobOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/jobs/{id}",
    operationId: "getJob",
    tags: ["jobs"],
    summary: "A job: status, rows by state, batches with their operationId, gas used and wei spent",
    security: [{ AccessKey: [] }],
    request: { params: JobParams },
    responses: {
      200: { description: "The job", content: { "application/json": { schema: JobView } } },
      400: errorResponse("VALIDATION_ERROR: the id is 1 to 100 characters"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("JOB_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
