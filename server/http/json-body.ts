import { bodyParser } from "@koa/bodyparser";
import type { Context } from "koa";
import { ApiError } from "./errors";

export const BODY_LIMIT = "100kb";

const parse = bodyParser({
  enableTypes: ["json"],
  jsonLimit: BODY_LIMIT,
  jsonStrict: false,
  // Petstore's user operations declare no `consumes`, so generated clients send their JSON with
  // no Content-Type or as text/plain: read those bodies as JSON too.
  detectJSON: (ctx) => ctx.request.type === "" || ctx.request.type === "text/plain",
  onError: (err) => {
    const tooLarge = (err as { type?: string }).type === "entity.too.large";
    throw new ApiError(
      "VALIDATION_ERROR",
      tooLarge ? `Request body is over ${BODY_LIMIT}` : "Request body is not valid JSON",
      [{ path: "(body)", message: tooLarge ? "too large" : "invalid JSON" }],
    );
  },
});

/**
 * The request's JSON body, read when a route asks for it (once; later calls answer the same),
 * so that a route checks what needs no body (an API key, a session) before it reads one.
 * Throws 400 VALIDATION_ERROR for a body that is not JSON or is over BODY_LIMIT.
 */
export async function readJsonBody(ctx: Context): Promise<unknown> {
  await parse(ctx, async () => {});
  return ctx.request.body;
}
