import { randomUUID } from "node:crypto";
import Koa from "koa";
import type Router from "@koa/router";
import cors from "@koa/cors";
import etag from "etag";
import { chainUnavailable, isNodeFailure, isUnanswered } from "../chain/unanswered";
import { UNMATCHED_ROUTE, type ServiceMetrics } from "../metrics/metrics";
import { ApiError, errorBody } from "./errors";
import type { Logger } from "./logger";
import { knownRoutes, nearestRoutes, type KnownRoute } from "./nearest-routes";
import { requestContext } from "./request-context";

export interface KoaAppOptions {
  logger: Logger;
  routers: Router[];
  /**
   * Middleware that route each request to its chain's router (server/chains/dispatch), after the
   * routers; `matchers` are one chain's routers, for the Allow header of a 405.
   */
  dispatched?: { middleware: Koa.Middleware; matcher: Router }[];
  /** Trust X-Forwarded-For for ctx.ip (the service runs behind a reverse proxy). */
  trustProxy?: boolean;
  /** Counts every request by route template and status (GET /metrics). */
  metrics?: ServiceMetrics;
}

/**
 * A Koa app with the plumbing every route group shares: request ids, access logs, the error
 * envelope, CORS, weak ETags, and 404/405 for what no router serves.
 */
export function createKoaApp({ logger, routers, trustProxy = false, metrics, dispatched = [] }: KoaAppOptions): Koa {
  const app = new Koa();
  app.proxy = trustProxy;
  // Only the address our own proxy appended counts: earlier X-Forwarded-For entries are the client's word.
  app.maxIpsCount = 1;
  app.silent = true; // errors are logged by the middleware below, once, with the request id

  // The request id also follows the request's async work, for the process-level error handlers.
  app.use((ctx, next) => {
    const requestId = randomUUID();
    ctx.state.requestId = requestId;
    return requestContext.run({ requestId }, next);
  });

  app.use(async (ctx, next) => {
    const requestId = ctx.state.requestId as string;
    const started = process.hrtime.bigint();
    ctx.set("X-Request-Id", requestId);
    try {
      await next();
    } catch (err) {
      const apiError = toApiError(err);
      if (apiError.status >= 500 && apiError.code === "INTERNAL_ERROR") {
        logger.error({ requestId, err }, "unhandled error");
      }
      ctx.status = apiError.status;
      ctx.body = errorBody(apiError);
      for (const [name, value] of Object.entries(apiError.headers ?? {})) ctx.set(name, value);
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    // The route template (/docs/:asset), never the raw path: each distinct path would be a new series.
    const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
    metrics?.httpRequest(ctx.method, typeof route === "string" ? route : UNMATCHED_ROUTE, ctx.status, ms / 1000);
    // ctx.path, never ctx.url: query strings can carry credentials (Petstore login).
    logger.info(
      {
        requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms,
        ...(ctx.status >= 400 && isErrorBody(ctx.body) ? { code: ctx.body.error.code } : {}),
      },
      "request",
    );
  });

  app.use(
    cors({
      origin: "*",
      exposeHeaders: ["ETag", "X-Request-Id", "X-Rate-Limit", "X-Expires-After", "Retry-After", "WWW-Authenticate"],
    }),
  );

  app.use(weakEtag);

  for (const router of routers) app.use(router.routes());
  for (const { middleware } of dispatched) app.use(middleware);

  // What a 404 suggests, gathered at the first one: every route is registered by then.
  const allRouters = () => [...routers, ...dispatched.map((d) => d.matcher)];
  let known: KnownRoute[] | undefined;
  app.use(async (ctx) => {
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allowed = new Set(
      [...routers, ...dispatched.map((d) => d.matcher)].flatMap((router) =>
        router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods),
      ),
    );
    if (allowed.size > 0) {
      ctx.set("Allow", [...allowed].join(", "));
      throw new ApiError("METHOD_NOT_ALLOWED", `${ctx.method} is not allowed on ${ctx.path}`);
    }
    throw new ApiError("NOT_FOUND", noRoute(ctx.method, ctx.path, (known ??= knownRoutes(allRouters()))));
  });

  return app;
}

/** "No route POST /nft/totalSupply; did you mean POST /nft/total-supply?", or where to start. */
function noRoute(method: string, path: string, known: KnownRoute[]): string {
  // A path is the caller's own text: a long one is cut, not echoed whole.
  const asked = `No route ${method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`;
  const nearest = path.length > 200 ? [] : nearestRoutes(method, path, known);
  if (nearest.length === 0) return `${asked}: GET /openapi.json lists every route (GET /docs shows them)`;
  return `${asked}; did you mean ${nearest.map((r) => `${r.method} ${r.path}`).join(" or ")}?`;
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // A chain question no RPC URL answered, on a path that does not map its chain errors: never 500.
  if (isUnanswered(err) || isNodeFailure(err)) return chainUnavailable();
  return new ApiError("INTERNAL_ERROR", "Internal error");
}

function isErrorBody(body: unknown): body is { error: { code: string } } {
  return typeof body === "object" && body !== null && "error" in body;
}

/** Sets a weak ETag on 200 JSON responses and answers 304 to a matching If-None-Match. */
async function weakEtag(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  await next();
  if (ctx.status !== 200 || ctx.body === undefined || ctx.body === null) return;
  if (
    typeof ctx.body === "object" &&
    !Buffer.isBuffer(ctx.body) &&
    typeof (ctx.body as { pipe?: unknown }).pipe === "function"
  )
    return;
  if (typeof ctx.body !== "string" && !Buffer.isBuffer(ctx.body)) {
    // Serialise once here; Koa would otherwise stringify the object again when responding.
    ctx.body = JSON.stringify(ctx.body);
    ctx.type = "application/json";
  }
  ctx.set("ETag", etag(ctx.body as string | Buffer, { weak: true }));
  if (ctx.fresh) ctx.status = 304;
}
