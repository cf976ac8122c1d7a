import type { Middleware } from "koa";
import { createReadStream } from "node:fs";
import path from "node:path";
import Router, { type RouterContext } from "@koa/router";
// The package's main module loads the whole Swagger UI bundle (about 0.5 CPU-s at every start); this one only finds it.
import getAbsoluteFSPath from "swagger-ui-dist/absolute-path";
import { z } from "zod";
import { ChainStatusView, RpcUrlStateView, type ChainStatus } from "./chain-status-views";
import { ApiError, type ErrorDetail } from "./errors";
import { errorResponse, type OpenAPIRegistry } from "./openapi";
import type { RpcUrlState } from "../chain/rpc-failover";

const DOCS_ASSETS = new Map([
  ["swagger-ui.css", "text/css; charset=utf-8"],
  ["swagger-ui-bundle.js", "application/javascript; charset=utf-8"],
  ["swagger-ui-standalone-preset.js", "application/javascript; charset=utf-8"],
]);

// Swagger UI from the swagger-ui-dist package, served by this process: no CDN.
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>NFT contract operations service</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-ui-standalone-preset.js"></script>
<script>window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: "StandaloneLayout" });</script>
</body></html>`;

/** How long GET /health/ready waits for the store's `SELECT 1`. */
const STORE_CHECK_TIMEOUT_MS = 5_000;

export interface ReadinessChecks {
  /** Chain id and current block; throws an ApiError (503) when the chain does not answer. */
  chain(): Promise<{ chainId: string; blockNumber: number }>;
  /** Resolves when the store answers a trivial query; unset = no store to check. */
  store?(): Promise<unknown>;
  /**
   * Several chains: each one's status. Set, /health answers `ok` or `degraded` (some chain down)
   * with every chain's, while the store and one chain answer; 503 when the store or every chain is down.
   */
  chains?(): Promise<ChainStatus[]>;
  /** Each RPC URL's state (masked), added to GET /health; unset = not shown (the embedded chain, or one URL). */
  rpcUrls?(): RpcUrlState[];
}

export interface ServiceRouteDeps extends ReadinessChecks {
  /** Prometheus text of the service's metrics. */
  metrics(): Promise<{ contentType: string; text: string }>;
  /** Guards GET /metrics (scope metrics:read, needed only with REQUIRE_ACCESS_KEY). */
  metricsAccess?: Middleware;
}

/** GET /health, /health/live, /health/ready and /metrics. */
export function createServiceRouter(deps: ServiceRouteDeps): Router {
  const router = new Router();
  const ready = async (ctx: RouterContext) => {
    if (deps.chains) {
      ctx.body = await severalChains(deps, deps.chains);
      return;
    }
    const ready = await readiness(deps);
    ctx.body = { status: "ok", ...ready, ...(deps.rpcUrls ? { rpcUrls: deps.rpcUrls() } : {}) };
  };
  router.get("/health", ready);
  router.get("/health/ready", ready);
  // Whatever the chain and the store do: a liveness probe must not restart the service for them.
  router.get("/health/live", (ctx) => {
    ctx.body = { status: "ok" };
  });
  const guard: Middleware = deps.metricsAccess ?? ((_ctx, next) => next());
  router.get("/metrics", guard, async (ctx) => {
    const { contentType, text } = await deps.metrics();
    ctx.type = contentType;
    ctx.body = text;
  });
  return router;
}

/**
 * GET /openapi.json and /docs (Swagger UI) of one listener: each listener documents the routes
 * it serves, and only those.
 */
export function createDocsRouter(openApiDocument: () => object, options: { apiListener?: boolean } = {}): Router {
  const router = new Router();
  // Where a newcomer who opens the bare address starts.
  const start = {
    service: "NFT contract operations service",
    docs: "/docs",
    openapi: "/openapi.json",
    // The demo listener (DEMO_PORT) serves neither.
    ...(options.apiListener ? { console: "/console", health: "/health" } : {}),
  };
  router.get("/", (ctx) => {
    ctx.body = start;
  });
  router.get("/openapi.json", (ctx) => {
    ctx.body = openApiDocument();
  });
  router.get("/docs", (ctx) => {
    ctx.type = "text/html; charset=utf-8";
    ctx.body = DOCS_PAGE;
  });
  router.get("/docs/:asset", (ctx) => {
    const type = DOCS_ASSETS.get(ctx.params.asset);
    if (!type) return; // falls through to 404
    ctx.type = type;
    ctx.body = createReadStream(path.join(getAbsoluteFSPath(), ctx.params.asset));
  });
  return router;
}

/**
 * The chain and the store, asked together: the chain's id and block when both answer, else 503
 * CHAIN_UNAVAILABLE (the chain does not answer) or STORE_UNAVAILABLE, with a detail per failure.
 */
export async function readiness(checks: ReadinessChecks): Promise<{ chainId: string; blockNumber: number }> {
  const [chain, store] = await Promise.allSettled([checks.chain(), checks.store ? storeCheck(checks.store) : null]);
  const details: ErrorDetail[] = [];
  if (chain.status === "rejected") details.push({ path: "chain", message: "does not answer" });
  if (store.status === "rejected") details.push({ path: "store", message: "does not answer" });
  if (chain.status === "rejected") {
    const reason = chain.reason instanceof ApiError ? chain.reason : undefined;
    if (reason && reason.code !== "CHAIN_UNAVAILABLE") throw reason;
    throw new ApiError("CHAIN_UNAVAILABLE", reason?.message ?? "The JSON-RPC endpoint does not answer", details);
  }
  if (store.status === "rejected") throw new ApiError("STORE_UNAVAILABLE", "The database does not answer", details);
  return chain.value;
}

/** Readiness with several chains: degraded, not down, while the store and one chain answer. */
async function severalChains(
  checks: ReadinessChecks,
  statuses: () => Promise<ChainStatus[]>,
): Promise<{ status: "ok" | "degraded"; chains: ChainStatus[] }> {
  const [chains, store] = await Promise.allSettled([statuses(), checks.store ? storeCheck(checks.store) : null]);
  const list = chains.status === "fulfilled" ? chains.value : [];
  const up = list.filter((c) => c.status === "ok").length;
  const details: ErrorDetail[] = list
    .filter((c) => c.status === "down")
    .map((c) => ({ path: `chains.${c.name}`, message: "does not answer" }));
  if (store.status === "rejected") {
    details.push({ path: "store", message: "does not answer" });
    throw new ApiError("STORE_UNAVAILABLE", "The database does not answer", details);
  }
  if (up === 0) throw new ApiError("CHAIN_UNAVAILABLE", "No configured chain answers", details);
  return { status: up === list.length ? "ok" : "degraded", chains: list };
}

/** The store's check, bounded: a database server that accepts no connection must not hold the probe. */
async function storeCheck(check: () => Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("store check timed out")), STORE_CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

export function registerServiceOpenApi(registry: OpenAPIRegistry): void {
  const Health = z
    .union([
      z.object({
        status: z.literal("ok"),
        chainId: z.string(),
        blockNumber: z.number().int(),
        rpcUrls: z
          .array(RpcUrlStateView)
          .optional()
          .openapi({ description: "Each RPC URL of the chain (RPC_URL), in failover order, when it lists several" }),
      }),
      z.object({ status: z.enum(["ok", "degraded"]), chains: z.array(ChainStatusView) }).openapi({
        description: "Several chains: degraded while some chain is down and the store and one chain answer",
      }),
    ])
    .openapi("Health");
  const readinessResponses = {
    200: {
      description: "The chain and the store both answer",
      content: { "application/json": { schema: Health } },
    },
    503: errorResponse("CHAIN_UNAVAILABLE, STORE_UNAVAILABLE"),
  };
  registry.registerPath({
    method: "get",
    path: "/health",
    operationId: "health",
    tags: ["service"],
    summary: "Readiness: the chain and the store answer (the same as /health/ready)",
    responses: readinessResponses,
  });
  registry.registerPath({
    method: "get",
    path: "/health/ready",
    operationId: "healthReady",
    tags: ["service"],
    summary: "Readiness: the chain and the store answer",
    description: "For a readiness probe or a load balancer: take the instance out of rotation while it answers 503.",
    responses: readinessResponses,
  });
  registry.registerPath({
    method: "get",
    path: "/health/live",
    operationId: "healthLive",
    tags: ["service"],
    summary: "Liveness: the process serves",
    description: "200 whatever the chain and the store do: for a liveness probe, which restarts the process.",
    responses: {
      200: {
        description: "The process serves HTTP",
        content: { "application/json": { schema: z.object({ status: z.literal("ok") }).openapi("Live") } },
      },
    },
  });
  registry.registerPath({
    method: "get",
    path: "/metrics",
    operationId: "metrics",
    tags: ["service"],
    summary: "Prometheus metrics",
    description:
      "HTTP requests by route and status, JSON-RPC calls by method, operations by status, nonce allocations, signer pool size, process metrics. With REQUIRE_ACCESS_KEY=true, an access key with metrics:read.",
    security: [{}, { AccessKey: [] }],
    responses: {
      200: {
        description: "Prometheus text exposition format 0.0.4",
        content: { "text/plain": { schema: z.string() } },
      },
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}

/** GET / and GET /openapi.json, in the document of every listener. */
export function registerDocsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/",
    operationId: "start",
    tags: ["service"],
    summary: "Where to start: the links to this listener's docs, OpenAPI document and console",
    responses: {
      200: {
        description: "The links",
        content: {
          "application/json": {
            schema: z
              .object({
                service: z.string(),
                docs: z.literal("/docs").openapi({ description: "Swagger UI of this document" }),
                openapi: z.literal("/openapi.json").openapi({ description: "This OpenAPI document" }),
                console: z
                  .literal("/console")
                  .optional()
                  .openapi({ description: "The operators' page (the API listener only)" }),
                health: z.literal("/health").optional().openapi({ description: "Readiness (the API listener only)" }),
              })
              .openapi("Start"),
          },
        },
      },
    },
  });
  registry.registerPath({
    method: "get",
    path: "/openapi.json",
    operationId: "openApiDocument",
    tags: ["service"],
    summary: "This document: the routes of this listener",
    responses: {
      200: {
        description: "OpenAPI 3.1 document",
        content: { "application/json": { schema: z.object({}).passthrough() } },
      },
    },
  });
}
