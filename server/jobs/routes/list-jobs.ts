import type Router from "@koa/router";
import { z } from "zod";
import type { AccessPrincipal } from "../../access";
import { chainField } from "../../http/fields";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import { jobView, READ, visible, type JobRouteDeps } from "./deps";
import { Cursor, JobView, Limit } from "./schemas";

const ListQuery = z.object({
  limit: Limit,
  cursor: Cursor,
  chain: chainField.openapi({ description: "Only this chain's jobs (by id or name); unset = every chain" }),
});

/**
 * GET /jobs: newest first, paged; `?chain=` (this router's chain: the dispatcher routed it here)
 * lists one chain's. A key limited to some chains, wallets or collections sees only their jobs.
 */
export function mountListJobs(router: Router, deps: JobRouteDeps): void {
  router.get("/jobs", deps.access.require(READ), async (ctx) => {
    const { limit, cursor, chain } = parseInput(ListQuery, ctx.query);
    const principal = ctx.state.access as AccessPrincipal;
    const chains = chain !== undefined ? [deps.chain.options.chainId.toString()] : principal.chains;
    const page = await deps.store.list(limit, cursor, chains ?? undefined);
    const jobs = await Promise.all(page.filter((job) => visible(ctx, job)).map((job) => jobView(deps, job, false)));
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
