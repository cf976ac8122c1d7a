import { Readable } from "node:stream";
import type Router from "@koa/router";
import { getAddress } from "ethers";
import { z } from "zod";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseInput } from "../../http/validation";
import type { RowRecord } from "../job-store";
import { JobParams, jobOfPath, READ, type JobRouteDeps } from "./deps";
import { Cursor, RowStatusSchema, RowView } from "./schemas";

const RowsQuery = z.object({
  status: RowStatusSchema.optional(),
  cursor: Cursor,
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

/** Rows read per query while a CSV streams out. */
const CSV_PAGE = 5_000;
const CSV_HEADER = "row,address,amount,tokenId,status,tokenIds,state,error\n";

function rowView(row: RowRecord) {
  return {
    row: row.line,
    address: getAddress(row.address),
    ...(row.amount !== null ? { amount: row.amount } : {}),
    ...(row.tokenId !== null ? { tokenId: row.tokenId } : {}),
    status: row.status,
    ...(row.tokenIds ? { tokenIds: row.tokenIds } : {}),
    ...(row.state ? { state: row.state } : {}),
    ...(row.error ? { error: row.error } : {}),
  };
}

/** A CSV field: quoted when it holds a comma, a quote or a line break. */
const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

function csvLine(row: RowRecord): string {
  const error = row.error ? `${row.error.code}: ${row.error.message}` : "";
  return `${[
    String(row.line),
    getAddress(row.address),
    row.amount ?? "",
    row.tokenId ?? "",
    row.status,
    (row.tokenIds ?? []).join(" "),
    row.state ?? "",
    field(error),
  ].join(",")}\n`;
}

/**
 * GET /jobs/{id}/rows: each row with its state, token ids or failure reason. JSON is paged
 * (limit ≤ 500, cursor); CSV (Accept: text/csv) streams every row after the cursor, or `limit` rows.
 */
export function mountJobRows(router: Router, deps: JobRouteDeps): void {
  router.get("/jobs/:id/rows", deps.access.require(READ), async (ctx) => {
    const job = await jobOfPath(ctx, deps);
    const { status, cursor, limit } = parseInput(RowsQuery, ctx.query);
    const after = cursor === undefined ? -1 : Number(cursor);
    if (ctx.accepts("application/json", "text/csv") === "text/csv") {
      ctx.type = "text/csv; charset=utf-8";
      ctx.set("Content-Disposition", `attachment; filename="job-${job.id}-rows.csv"`);
      ctx.body = Readable.from(csvLines(deps, job.id, status, after, limit));
      return;
    }
    const rows = await deps.store.rows(job.id, { status, cursor: after, limit: limit ?? 100 });
    ctx.body = {
      rows: rows.map(rowView),
      ...(rows.length === (limit ?? 100) ? { cursor: String(rows[rows.length - 1].n) } : {}),
    };
  });
}

async function* csvLines(
  deps: JobRouteDeps,
  jobId: string,
  status: RowRecord["status"] | undefined,
  after: number,
  limit: number | undefined,
): AsyncGenerator<string> {
  yield CSV_HEADER;
  let left = limit ?? Infinity;
  for (let cursor = after; left > 0;) {
    const rows = await deps.store.rows(jobId, { status, cursor, limit: Math.min(CSV_PAGE, left) });
    if (rows.length === 0) return;
    yield rows.map(csvLine).join("");
    left -= rows.length;
    cursor = rows[rows.length - 1].n;
  }
}

export function registerJobRowsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/jobs/{id}/rows",
    operationId: "listJobRows",
    tags: ["jobs"],
    summary: "A job's rows with their state, token ids (airdrop) or state (whitelist), or failure reason",
    description: "JSON paged by limit (≤ 500, default 100) and cursor; with Accept: text/csv, every row as CSV.",
    security: [{ AccessKey: [] }],
    request: { params: JobParams, query: RowsQuery },
    responses: {
      200: {
        description: "A page of rows; `cursor` fetches the next",
        content: {
          "application/json": { schema: z.object({ rows: z.array(RowView), cursor: z.string().optional() }) },
          "text/csv": { schema: z.string().openapi({ description: CSV_HEADER.trim() }) },
        },
      },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("JOB_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
