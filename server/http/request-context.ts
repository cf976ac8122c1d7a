import { AsyncLocalStorage } from "node:async_hooks";

export interface RequestContext {
  requestId: string;
}

/**
 * The request being served, for code that has no Koa context: the process-level error handlers
 * name the request whose work threw or rejected (server/runtime/process-handlers.ts).
 */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
