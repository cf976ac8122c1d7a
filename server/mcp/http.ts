import { createHmac, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import Router from "@koa/router";
import { toWebRequest } from "@modelcontextprotocol/node";
import { createMcpHandler, isLegacyRequest, type McpServerFactory } from "@modelcontextprotocol/server";
import type Koa from "koa";
import type { AccessControl, AccessDeclaration, AccessPrincipal, AuditLog } from "../access";
import type { SqlExecutor } from "../db";
import { ApiError } from "../http/errors";
import type { Logger } from "../http/logger";
import { readJsonBody } from "../http/json-body";
import { inProcessDispatcher } from "./dispatch";
import { legacyJsonHandler } from "./legacy-json";
import { PlanTokens } from "./plan-token";
import { mcpServerFor, type McpCaller, type McpDeps } from "./server";

export interface McpRouteDeps {
  access: AccessControl;
  /** The app the tools call their routes through (the one /mcp is mounted in), once built. */
  app: () => Koa;
  /** Where a request /mcp could not serve is logged (both legs; the caller's answer says only that it failed). */
  logger: Logger;
  /** The root key (API_KEY): plan tokens are signed with a key made from it, the same on every instance. */
  rootKey?: string;
  audit?: { log: AuditLog; db: SqlExecutor };
}

/** Any valid key may open /mcp: each tool is listed and checked by its own route's declaration. */
const MCP_ACCESS: AccessDeclaration = { key: "always" };

/** What the handler's factory is given with each request: the caller, and the one tool a tools/call needs. */
type RequestExtra = {
  caller: McpCaller;
  only?: string;
};

/** The largest request: set_allowlist takes up to 100,000 entries, as its route does. */
const BODY_MB = 12;
const BODY_LIMIT = `${BODY_MB}mb`;
const BODY_BYTES = BODY_MB * 1024 * 1024;

/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (a server per request,
 * both protocol eras the SDK serves). The key is read from `Authorization: Bearer` only; the
 * tools call the routes in-process with it, through the app's own middleware (dispatch.ts), so a
 * tool never does more than its route.
 */
export function createMcpRouter(deps: McpRouteDeps): Router {
  const secret = deps.rootKey
    ? createHmac("sha256", deps.rootKey).update("nft-ops mcp plan tokens").digest()
    : randomBytes(32);
  const tools: McpDeps = {
    planTokens: new PlanTokens(secret),
    audit: deps.audit,
    dispatch: inProcessDispatcher(deps.app),
  };
  const factory: McpServerFactory = (context) => {
    const extra = context.authInfo?.extra as RequestExtra | undefined;
    if (!extra) throw new Error("MCP: a request reached the handler without its caller");
    return mcpServerFor(extra.caller, tools, extra.only);
  };
  // One factory for both eras: the 2026-07-28 leg is the SDK's entry, the 2025 one answers JSON (legacy-json.ts).
  const modern = withoutJsonModeWarning(() =>
    createMcpHandler(factory, {
      legacy: "reject",
      responseMode: "json",
      maxRequestBodySize: BODY_BYTES,
      onerror: (err) => deps.logger.warn({ err }, "MCP: a request failed"),
    }),
  );
  const legacy = legacyJsonHandler(factory, BODY_BYTES, deps.logger);

  const router = new Router();
  router.all("/mcp", async (ctx) => {
    try {
      await serve(ctx);
    } catch (err) {
      if (!(err instanceof McpBatchRefused)) throw err;
      ctx.status = 400;
      ctx.body = { jsonrpc: "2.0", error: { code: -32600, message: err.message }, id: null };
    }
  });
  return router;

  /** One request to /mcp, either era. */
  async function serve(ctx: Koa.Context): Promise<void> {
    // Bearer only: a key in X-API-Key, or in the URL, is not read here.
    const bearer = /^Bearer +(\S+)$/i.exec(ctx.get("Authorization").trim())?.[1];
    if (!bearer)
      throw new ApiError(
        "UNAUTHORIZED",
        /^\S+$/.test(ctx.get("Authorization").trim())
          ? 'Authorization holds a key without its scheme: send Authorization: Bearer <key> (add "Bearer " before the key)'
          : "An access key is required: send Authorization: Bearer <key> (never in the URL)",
        undefined,
        { "WWW-Authenticate": 'Bearer realm="nft-ops"' },
      );
    const principal = (await deps.access.admit(ctx, MCP_ACCESS)) as AccessPrincipal;
    const caller: McpCaller = { key: bearer, principal, clientAddress: ctx.ip };
    const body = ctx.method === "POST" ? await readJsonBody(ctx, BODY_LIMIT) : undefined;
    if (Array.isArray(body)) refuseLargeBatch(ctx, body);
    const request = await toWebRequest(ctx.req as Parameters<typeof toWebRequest>[0], body);
    const extra: RequestExtra = { caller, only: calledTool(body) };
    const authInfo = { token: bearer, clientId: principal.keyId ?? "root", scopes: [...principal.scopes], extra };
    const response = (await isLegacyRequest(request, body))
      ? await legacy(request, { authInfo, parsedBody: body })
      : await modern.fetch(request, { authInfo, parsedBody: body });
    ctx.status = response.status;
    response.headers.forEach((value, name) => ctx.set(name, value));
    const type = response.headers.get("content-type") ?? "";
    if (!response.body) ctx.body = null;
    else if (type.includes("text/event-stream"))
      ctx.body = Readable.fromWeb(response.body as Parameters<typeof Readable.fromWeb>[0]);
    else ctx.body = Buffer.from(await response.arrayBuffer());
  }
}

/**
 * A JSON-RPC batch's bounds: each message may be a tool call that reads the chain or plans a
 * write, so a batch's work and answer grow with it (100 plans: 107 RPC calls, a 142 kB answer).
 * A large list (set_allowlist's 100,000 entries) is sent as one message, not in a batch.
 */
export const MAX_BATCH_MESSAGES = 10;
export const MAX_BATCH_BYTES = 1024 * 1024;

/** 400 with a JSON-RPC error (-32600, Invalid Request) for a batch past its bounds: nothing in it runs. */
function refuseLargeBatch(ctx: Koa.Context, batch: unknown[]): void {
  const raw = ctx.request.rawBody;
  const bytes = typeof raw === "string" ? Buffer.byteLength(raw) : 0;
  const problem =
    batch.length > MAX_BATCH_MESSAGES
      ? `A JSON-RPC batch holds at most ${MAX_BATCH_MESSAGES} messages; this one holds ${batch.length}`
      : bytes > MAX_BATCH_BYTES
        ? `A JSON-RPC batch is at most ${MAX_BATCH_BYTES} bytes; this one is ${bytes}: send large calls alone`
        : undefined;
  if (!problem) return;
  throw new McpBatchRefused(problem);
}

/** Answered by the router as a JSON-RPC error rather than the API's error envelope. */
class McpBatchRefused extends Error {}

/** The tool a lone tools/call names: a server for it needs no other (a server is made per request). */
function calledTool(body: unknown): string | undefined {
  const message = body as { method?: unknown; params?: { name?: unknown } } | undefined;
  return message?.method === "tools/call" && typeof message.params?.name === "string" ? message.params.name : undefined;
}

/**
 * Builds the handler without the SDK's console line "responseMode: 'json' drops mid-call
 * notifications…", printed at every start before the banner: the tools send no mid-call
 * notifications, so it says nothing to an operator. Any other warning passes.
 */
function withoutJsonModeWarning<T>(build: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && args[0].startsWith("responseMode: 'json' drops mid-call")) return;
    warn(...args);
  };
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}
