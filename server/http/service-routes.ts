import { createReadStream } from "node:fs";
import path from "node:path";
import Router from "@koa/router";
import { getAbsoluteFSPath } from "swagger-ui-dist";
import { z } from "zod";
import { errorResponse, type OpenAPIRegistry } from "./openapi";

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

export interface ServiceRouteDeps {
  /** Chain id and current block; throws an ApiError (503) when the chain does not answer. */
  health(): Promise<{ chainId: string; blockNumber: number }>;
  openApiDocument(): object;
}

/** GET /health, /openapi.json and /docs. */
export function createServiceRouter(deps: ServiceRouteDeps): Router {
  const router = new Router();
  router.get("/health", async (ctx) => {
    ctx.body = { status: "ok", ...(await deps.health()) };
  });
  router.get("/openapi.json", (ctx) => {
    ctx.body = deps.openApiDocument();
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

export function registerServiceOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/health",
    tags: ["service"],
    summary: "Liveness and chain reachability",
    responses: {
      200: {
        description: "The service and its chain answer",
        content: {
          "application/json": {
            schema: z
              .object({ status: z.literal("ok"), chainId: z.string(), blockNumber: z.number().int() })
              .openapi("Health"),
          },
        },
      },
      503: errorResponse("CHAIN_UNAVAILABLE"),
    },
  });
  registry.registerPath({
    method: "get",
    path: "/openapi.json",
    tags: ["service"],
    summary: "This document",
    responses: {
      200: {
        description: "OpenAPI 3.1 document",
        content: { "application/json": { schema: z.object({}).passthrough() } },
      },
    },
  });
}
