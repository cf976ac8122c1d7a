/**
 * GET /metadata/{chainId}/{address}/{tokenId}[.json] answered before Koa: it is what marketplaces
 * hit at load, its documents are bytes in memory, and Koa's stack (request id, access log, metrics,
 * CORS, ETag middleware) cost more than the answer. The same answers as the routed handler
 * (routes.ts), which still documents the route and serves it where this is not mounted.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, errorBody } from "../http/errors";
import type { MetadataService } from "./metadata-service";

const PATH = /^\/metadata\/(\d{1,20})\/(0x[0-9a-fA-F]{40})\/([0-9]{1,20})(?:\.json)?(?:\?.*)?$/;
const etags = new WeakMap<Buffer, string>();

function etagOf(body: Buffer): string {
  let tag = etags.get(body);
  if (!tag) etags.set(body, (tag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`));
  return tag;
}

/** A request listener that serves hosted documents and hands everything else to `next`. */
export function metadataFastPath(
  serviceOf: (chainId: string) => MetadataService | undefined,
  /** Counts the request against its client's limit: rejects with 429 RATE_LIMITED past it. */
  admit: (req: IncomingMessage) => Promise<void> | undefined,
  next: (req: IncomingMessage, res: ServerResponse) => void,
  onInternalError: (err: unknown) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const match = (req.method === "GET" || req.method === "HEAD") && req.url ? PATH.exec(req.url) : null;
    if (!match) return next(req, res);
    const [, chainId, address, tokenId] = match;
    const service = serviceOf(chainId);
    const served = Promise.resolve(admit(req)).then(() =>
      service
        ? service.serve(chainId, address, BigInt(tokenId))
        : Promise.reject(new ApiError("NOT_FOUND", `No metadata is hosted on chain ${chainId}`)),
    );
    served.then(
      (body) => {
        const etag = etagOf(body);
        const headers = {
          "content-type": "application/json; charset=utf-8",
          "cache-control": "public, max-age=60",
          "access-control-allow-origin": "*",
          "access-control-expose-headers": "ETag",
          etag,
        };
        if (req.headers["if-none-match"] === etag) return void res.writeHead(304, headers).end();
        res.writeHead(200, { ...headers, "content-length": body.length });
        res.end(req.method === "HEAD" ? undefined : body);
      },
      (err: unknown) => {
        if (!(err instanceof ApiError)) onInternalError(err); // Koa's access log never sees these requests
        const error = err instanceof ApiError ? err : new ApiError("INTERNAL_ERROR", "Internal error");
        const body = JSON.stringify(errorBody(error));
        res
          .writeHead(error.status, {
            "content-type": "application/json; charset=utf-8",
            "access-control-allow-origin": "*",
            ...error.headers,
          })
          .end(body);
      },
    );
  };
}
