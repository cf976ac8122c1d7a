import { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type Koa from "koa";
import type { RouteAnswer, RouteRequest } from "./server";

/**
 * Runs one route request through the Koa app's own middleware, in process: the same request id,
 * metrics, routers, access checks, body parser (with each route's own size limit) and error
 * envelope as a request from the network, without a socket, an HTTP parser or a serialised
 * response. The context is made by Koa itself over a real IncomingMessage fed the body, and
 * the answer read from the context once the middleware is done.
 */
export function inProcessDispatcher(app: () => Koa): (request: RouteRequest) => Promise<RouteAnswer> {
  let composed: { koa: Koa; run: (ctx: Koa.Context) => Promise<unknown> } | undefined;
  return async (request) => {
    if (!composed) {
      // Koa 3's own composition (app.compose, the same callback() uses) of the app's middleware.
      const koa = app() as Koa & { compose: (middleware: Koa.Middleware[]) => (ctx: Koa.Context) => Promise<unknown> };
      composed = { koa, run: koa.compose(koa.middleware) };
    }
    const { koa, run } = composed;
    const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
    // Only what Koa and the routes read of a socket: the client's address (ctx.ip), no TLS, nothing to read or close.
    const socket = {
      remoteAddress: request.clientAddress,
      encrypted: false,
      readable: false,
      destroyed: false,
      destroy() {},
    } as unknown as Socket;
    const req = new IncomingMessage(socket);
    req.method = request.method;
    req.url = request.url;
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.httpVersion = "1.1";
    const headers: Record<string, string> = { host: "mcp.internal" };
    for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
    if (payload) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(payload.length);
      req.push(payload);
    }
    req.headers = headers;
    req.push(null);
    // The whole message is here: a body the route never reads is not an aborted request.
    req.complete = true;
    const res = new ServerResponse(req);
    const ctx = koa.createContext(req, res);
    // As Koa's own handleRequest: a request no middleware answers is a 404.
    res.statusCode = 404;
    await run(ctx);
    return { status: ctx.status, headers: res.getHeaders(), body: await bodyText(ctx.body) };
  };
}

/** The route's answer as text: the app's etag middleware has made a JSON answer a string already. */
async function bodyText(body: unknown): Promise<string> {
  if (body === undefined || body === null) return "";
  if (typeof body === "string") return body;
  if (Buffer.isBuffer(body)) return body.toString("utf8");
  if (typeof (body as { pipe?: unknown }).pipe === "function") {
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Buffer | string>)
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    return Buffer.concat(chunks).toString("utf8");
  }
  return JSON.stringify(body);
}
