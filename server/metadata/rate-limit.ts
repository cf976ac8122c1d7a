/**
 * The limit on the public metadata documents (GET /metadata/…): anyone may call them with no key,
 * so each client address gets METADATA_REQUESTS_PER_MINUTE a minute (a fixed window counted in this
 * process's memory, as the access keys' failure counter), then 429 RATE_LIMITED with Retry-After.
 */
import type { IncomingMessage } from "node:http";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import { ApiError } from "../http/errors";

export class PublicRateLimit {
  private readonly limiter: RateLimiterMemory;

  constructor(perMinute: number) {
    this.limiter = new RateLimiterMemory({ keyPrefix: "metadata", points: perMinute, duration: 60 });
  }

  /** Counts one request from `client`; 429 RATE_LIMITED past the limit. */
  async take(client: string): Promise<void> {
    try {
      await this.limiter.consume(client);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      throw new ApiError("RATE_LIMITED", "Too many metadata requests from this address; retry later", undefined, {
        "Retry-After": String(Math.max(1, Math.ceil(err.msBeforeNext / 1000))),
      });
    }
  }
}

/** The limit, or none for 0 (METADATA_REQUESTS_PER_MINUTE=0). */
export function publicRateLimit(perMinute: number): PublicRateLimit | undefined {
  return perMinute > 0 ? new PublicRateLimit(perMinute) : undefined;
}

/** The client address of a request answered before Koa, as Koa's `ctx.ip` reads it (app.maxIpsCount = 1). */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? req.headers["x-forwarded-for"] : undefined;
  const list = Array.isArray(forwarded) ? forwarded.join(",") : forwarded;
  const last = list
    ?.split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "")
    .pop();
  return last ?? req.socket.remoteAddress ?? "";
}
