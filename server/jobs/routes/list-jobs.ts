import type Router from "@koa/router";
import { z } from "zod";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { chainField } from "../../chains/registry";
import { jobView, READ, visible, type JobRouteDeps } from "./deps";
import { Cursor, JobView, Limit } from "./schemas";

const ListQuery = z.object({
  limit: Limit,
  cursor: Cursor,
  chain: chainField.openapi({ description: "Only this chain's jobs (by id or name); unset = every chain" }),
});

/** GET /jobs: newest first, paged; a key limited to some wallets or collections sees only their jobs. */
export function mountListJobs(router: Router, deps: JobRouteDeps): void {
  router.get("/jobs", deps.access.require(READ), async (ctx) => {
    const { limit, cursor, chain } = parseInput(ListQuery, ctx.query);
    const page = await deps.store.list(limit, cursor);
    // `?chain=` was resolved by the dispatcher to this router's chain: its jobs only.
    const mine =
      chain === undefined ? page : page.filter((job) => job.chainId === deps.chain.options.chainId.toString());
    const jobs = await Promise.all(mine.filter((job) => visible(ctx, job)).map((job) => jobView(deps, job, false)));
    ctx.body = { jobs, ...(page.length === limit ? { cursor: page[page.length - 1].seq } : {}) };
  });
}

export function registerListJobsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/jobs",
    operationId: "listJobs",
    tags: ["jobs"],
    summary: "Jobs, newest first (without their batches), paged with limit (≤ 500) and cursor",
    security: [{ AccessKey: [] }],
    request: { query: ListQuery },
    responses: {
      200: {
        description: "A page of jobs; `cursor` fetches the next",
        content: {
          "application/json": { schema: z.object({ jobs: z.array(JobView), cursor: z.string().optional() }) },
        },
      },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
