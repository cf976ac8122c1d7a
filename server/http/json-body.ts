import { bodyParser } from "@koa/bodyparser";
import type { Context } from "koa";
import { ApiError } from "./errors";
import { jsonErrorPosition } from "../config/json-position";

export const BODY_LIMIT = "100kb";

const parserFor = (limit: string) =>
  bodyParser({
    enableTypes: ["json"],
    jsonLimit: limit,
    jsonStrict: false,
    // Petstore's user operations declare no `consumes`, so generated clients send their JSON with
    // no Content-Type or as text/plain: read those bodies as JSON too.
    detectJSON: (ctx) => READ_AS_JSON.has(ctx.request.type),
    onError: (err) => {
      const tooLarge = (err as { type?: string }).type === "entity.too.large";
      if (tooLarge)
        throw new ApiError("VALIDATION_ERROR", `Request body is over ${limit}`, [
          { path: "(body)", message: "too large" },
        ]);
      const where = invalidJsonPosition(err);
      throw new ApiError("VALIDATION_ERROR", `Request body is not valid JSON${where ? `: ${where}` : ""}`, [
        { path: "(body)", message: where ? `invalid JSON ${where}` : "invalid JSON" },
      ]);
    },
  });

/** The media types read as JSON beside application/json (and its `+json` kin). */
const READ_AS_JSON = new Set(["", "text/plain"]);

/**
 * Where a body stops being JSON, as "at position N (line L, column C)", from the text co-body keeps
 * on the error's `body`. Never the parser's message itself: on Node 22 and later it quotes the body,
 * which may hold a private key, and it gives no position for some inputs.
 */
function invalidJsonPosition(err: Error): string | undefined {
  const text = (err as { body?: unknown }).body;
  const where = typeof text === "string" ? jsonErrorPosition(text) : undefined;
  return where && `at position ${where.offset} (line ${where.line}, column ${where.column})`;
}

/**
 * 400 naming the header for a body sent as another type than JSON: `curl -d` sends
 * application/x-www-form-urlencoded unless told otherwise, and such a body would otherwise read as
 * empty and fail on its first field. (400, not 415: the Petstore user routes answer 400 for a form.)
 */
function requireJsonType(ctx: Context): void {
  const hasBody = ctx.request.length > 0 || ctx.get("transfer-encoding") !== "";
  if (!hasBody || READ_AS_JSON.has(ctx.request.type) || ctx.request.is("json")) return;
  throw new ApiError(
    "VALIDATION_ERROR",
    `The body must be JSON sent with the header Content-Type: application/json (it came as ${ctx.request.type})`,
    [{ path: "(header) Content-Type", message: "expected application/json" }],
  );
}

const parsers = new Map<string, ReturnType<typeof parserFor>>();

/**
 * The request's JSON body, read when a route asks for it (once; later calls answer the same),
 * so that a route checks what needs no body (an API key, a session) before it reads one.
 * Throws 400 VALIDATION_ERROR for a body that is not JSON or is over `limit` (BODY_LIMIT unless a
 * route says otherwise: an allowlist of 100,000 entries is some 10 MB), or sent as another type.
 */
export async function readJsonBody(ctx: Context, limit = BODY_LIMIT): Promise<unknown> {
  requireJsonType(ctx);
  let parse = parsers.get(limit);
  if (!parse) parsers.set(limit, (parse = parserFor(limit)));
  await parse(ctx, async () => {});
  return ctx.request.body;
}
