import { PassThrough } from "node:stream";
import type Router from "@koa/router";
import { z } from "zod";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { FINISHED } from "../job-store";
import { JobParams, jobOfPath, READ, type JobRouteDeps } from "./deps";

/** At most one event a second (API.md). */
const EVENT_INTERVAL_MS = 1_000;

/**
 * GET /jobs/{id}/events: Server-Sent Events. A `progress` event when the job's counts or status
 * changed (at most one a second), and a `final` event once it is completed, failed or cancelled,
 * after which the stream ends.
 */
export function mountJobEvents(router: Router, deps: JobRouteDeps): void {
  router.get("/jobs/:id/events", deps.access.require(READ), async (ctx) => {
    const job = await jobOfPath(ctx, deps);
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.set("Cache-Control", "no-cache");
    ctx.set("X-Accel-Buffering", "no");
    ctx.type = "text/event-stream";
    ctx.status = 200;
    const stream = new PassThrough();
    ctx.body = stream;
    let open = true;
    ctx.req.once("close", () => (open = false));
    void (async () => {
      let last = "";
      let id = 0;
      while (open) {
        const current = (await deps.store.find(job.id))!;
        const rowsByState = await deps.store.rowCounts(job.id);
        const final = FINISHED.includes(current.status);
        const data = JSON.stringify({
          jobId: job.id,
          status: current.status,
          rows: current.rows,
          rowsByState,
          ...(current.error ? { error: current.error } : {}),
        });
        if (data !== last || final) {
          stream.write(`id: ${++id}\nevent: ${final ? "final" : "progress"}\ndata: ${data}\n\n`);
          last = data;
        }
        if (final) break;
        await new Promise((resolve) => setTimeout(resolve, EVENT_INTERVAL_MS));
      }
      stream.end();
    })().catch((err: unknown) => stream.destroy(err as Error));
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
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("JOB_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
