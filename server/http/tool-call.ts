import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The MCP tool a request is made for, carried by the in-process call into the Koa app (never a
 * header, so no HTTP client can claim it): its operations record `via: "mcp"`.
 */
const toolCall = new AsyncLocalStorage<{ tool: string }>();

export const asTool = <T>(tool: string, run: () => Promise<T>): Promise<T> => toolCall.run({ tool }, run);

/** "mcp" inside a tool's call, else null. */
export const currentVia = (): "mcp" | null => (toolCall.getStore() ? "mcp" : null);
