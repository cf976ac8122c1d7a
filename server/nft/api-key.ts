import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "koa";
import { ApiError } from "../http/errors";

/**
 * Checks the API_KEY (or X-API-Key) header in constant time: both sides are hashed first, so
 * neither the content nor the length of the expected key leaks through timing.
 */
export function assertApiKey(ctx: Context, expected: string | undefined): void {
  const given = ctx.get("api_key") || ctx.get("x-api-key");
  const digest = (value: string) => createHash("sha256").update(value).digest();
  const matches = timingSafeEqual(digest(given), digest(expected ?? ""));
  if (!expected || !given || !matches) {
    throw new ApiError("INVALID_API_KEY", "A valid API_KEY (or X-API-Key) header is required");
  }
}
