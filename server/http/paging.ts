import { z } from "zod";
import { ApiError } from "./errors";
import "./openapi";

/**
 * Paging of the lists (API.md, "Access keys": `/access-keys`, `/wallets`, `/webhooks`), as
 * `/audit-events` pages: `limit` (1 to 500, 50 by default) and the opaque `cursor` of the previous
 * page, present while more may follow. The lists are ordered by creation time and id: a cursor is
 * the last row's position in that order (its creation time in microseconds, exact, and its id), so a
 * row made or removed meanwhile never makes a page skip or repeat another.
 */
export interface Position {
  /** Microseconds since the epoch of the row's created_at, as a decimal string. */
  at: string;
  id: string;
}

/**
 * The SQL of a row's position: select it `AS position_at` beside the row. Whole seconds and the
 * microseconds apart: before PostgreSQL 14 extract() answers a double, which cannot hold both at once.
 */
export const POSITION_AT = `(extract(epoch FROM date_trunc('second', created_at))::bigint * 1000000
  + extract(microseconds FROM created_at)::bigint % 1000000)::text`;

/** A microseconds value (as POSITION_AT gives it) back into a timestamptz, exactly. */
export const timestampOf = (param: string) => `('epoch'::timestamptz + ${param}::bigint * interval '1 microsecond')`;

const POSITION = z.tuple([z.string().regex(/^\d{1,17}$/), z.string().min(1).max(100)]);

export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString("base64url");
}

/** The position a cursor names; null for a string no page gave (PageQuery refuses those). */
export function decodeCursor(cursor: string): Position | null {
  try {
    const parsed = POSITION.safeParse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
    return parsed.success ? { at: parsed.data[0], id: parsed.data[1] } : null;
  } catch {
    return null;
  }
}

export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z
    .string()
    .max(300)
    .refine((v) => decodeCursor(v) !== null, "cursor must come from a previous page")
    .optional()
    .openapi({ description: "The `cursor` of the previous page, as it gave it (any other string is refused)" }),
});

/** A page asked for: how many rows, and after which position (none: from the start). */
export interface PageRequest {
  limit: number;
  after: Position | null;
}

/** PageQuery's result as a PageRequest. */
export function pageRequest(query: z.output<typeof PageQuery>): PageRequest {
  return { limit: query.limit, after: query.cursor === undefined ? null : decodeCursor(query.cursor) };
}

/**
 * One page of `rows` fetched with `limit + 1`: the first `limit`, and the cursor of the last when
 * there was one more.
 */
export function pageOf<T>(rows: T[], limit: number, positionOf: (row: T) => Position): { items: T[]; cursor?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, cursor: encodeCursor(positionOf(items[items.length - 1])) };
}

/** An opaque page cursor: base64url of JSON. */
export function encodeOpaqueCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

export function decodeOpaqueCursor<T>(cursor: string | undefined, schema: z.ZodType<T>): T | undefined {
  if (cursor === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  const result = schema.safeParse(parsed);
  if (!result.success)
    throw new ApiError("VALIDATION_ERROR", "cursor must come from a previous page", [
      { path: "cursor", message: "not a cursor this route gave" },
    ]);
  return result.data;
}
