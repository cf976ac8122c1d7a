import { bodyParser } from "@koa/bodyparser";
import type { Context } from "koa";
import { ApiError } from "./errors";

export const BODY_LIMIT = "100kb";

const parserFor = (limit: string) =>
  bodyParser({
    enableTypes: ["json"],
    jsonLimit: limit,
    jsonStrict: false,
    // Petstore's user operations declare no `consumes`, so generated clients send their JSON with
    // no Content-Type or as text/plain: read those bodies as JSON too.
    detectJSON: (ctx) => ctx.request.type === "" || ctx.request.type === "text/plain",
    onError: (err) => {
      const tooLarge = (err as { type?: string }).type === "entity.too.large";
      throw new ApiError(
        "VALIDATION_ERROR",
        tooLarge ? `Request body is over ${limit}` : "Request body is not valid JSON",
        [{ path: "(body)", message: tooLarge ? "too large" : "invalid JSON" }],
      );
    },
  });

const parsers = new Map<string, ReturnType<typeof parserFor>>();

/**
 * The request's JSON body, read when a route asks for it (once; later calls answer the same),
 * so that a route checks what needs no body (an API key, a session) before it reads one.
 * Throws 400 VALIDATION_ERROR for a body that is not JSON or is over `limit` (BODY_LIMIT unless a
 * route says otherwise: an allowlist of 100,000 entries is some 10 MB).
 */
export async function readJsonBody(ctx: Context, limit = BODY_LIMIT): Promise<unknown> {
  let parse = parsers.get(limit);
  if (!parse) parsers.set(limit, (parse = parserFor(limit)));
  await parse(ctx, async () => {});
  return ctx.request.body;
}
