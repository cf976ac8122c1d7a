import type Router from "@koa/router";
import { z } from "zod";
import { presentedKey, type AccessPrincipal } from "../../access";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { JobEventStreams } from "../event-streams";
import { JobParams, jobOfPath, READ, type JobRouteDeps } from "./deps";

/**
 * GET /jobs/{id}/events: Server-Sent Events. A `progress` event when the job's counts or status
 * changed (at most one a second), and a `final` event once it is completed, failed or cancelled,
 * after which the stream ends. At most 10 open per access key (429 past that); each ends when its
 * key is revoked or expires, and after 1 h (event-streams.ts).
 */
export function mountJobEvents(router: Router, deps: JobRouteDeps): void {
  const streams = new JobEventStreams(deps.store, deps.access.authenticator);
  router.get("/jobs/:id/events", deps.access.require(READ), async (ctx) => {
    const job = await jobOfPath(ctx, deps);
    const out = streams.open(job.id, ctx.state.access as AccessPrincipal, presentedKey(ctx)!);
    ctx.res.once("close", () => streams.closeOutput(out));
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.set("Cache-Control", "no-cache");
    ctx.set("X-Accel-Buffering", "no");
    ctx.type = "text/event-stream";
    ctx.status = 200;
    ctx.body = out;
  });
}

export function registerJobEventsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/jobs/{id}/events",
    operationId: "jobEvents",
    tags: ["jobs"],
    summary: "Server-Sent Events of a job's progress: `progress` (at most one a second), then `final`",
    security: [{ AccessKey: [] }],
    request: { params: JobParams },
    responses: {
      200: {
        description: 'event: progress|final, data: {"jobId","status","rows","rowsByState","error"?}',
        content: { "text/event-stream": { schema: z.string() } },
      },
      400: errorResponse("VALIDATION_ERROR: the id is 1 to 100 characters"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("JOB_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
