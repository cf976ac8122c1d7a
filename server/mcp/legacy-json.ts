import {
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServerFactory,
} from "@modelcontextprotocol/server";
import type { Logger } from "../http/logger";

/**
 * The 2025-era leg of /mcp (protocols 2025-06-18 and 2025-11-25, the SDK's 1.x clients): stateless,
 * as the SDK's own fallback serves it (a server and a transport per POST, GET and DELETE 405), but
 * answering a request with one JSON body (`enableJsonResponse`) instead of an SSE stream of one
 * event: the transport allows either, every client reads both, and a one-event stream costs the
 * server a web stream, its wrapper and its keep-alive timer per call.
 */
export function legacyJsonHandler(
  factory: McpServerFactory,
  maxRequestBodySize: number,
  logger: Logger,
): (request: Request, options: { authInfo: AuthInfo; parsedBody: unknown }) => Promise<Response> {
  return async (request, options) => {
    if (request.method.toUpperCase() !== "POST") return rpcError(405, -32000, "Method not allowed.", null);
    try {
      const server = await factory({ era: "legacy", authInfo: options.authInfo, requestInfo: request });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
        maxRequestBodySize,
      });
      await server.connect(transport);
      try {
        return await transport.handleRequest(request, options);
      } finally {
        transport.close().catch(() => {});
        server.close().catch(() => {});
      }
    } catch (err) {
      logger.error({ err }, "MCP: a 2025-era request failed");
      return rpcError(500, -32603, "Internal server error", requestId(options.parsedBody));
    }
  };
}

function rpcError(status: number, code: number, message: string, id: string | number | null): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code, message }, id },
    { status, ...(status === 405 ? { headers: { Allow: "POST" } } : {}) },
  );
}

/** The id of a lone JSON-RPC request, for its error answer; null when there is none. */
function requestId(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}
