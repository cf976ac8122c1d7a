import type { IncomingMessage } from "node:http";
import type {} from "@koa/bodyparser"; // brings ctx.request.body / rawBody into the Koa types
import { BODY_LIMIT } from "../../http/app";
import { ApiError } from "../../http/errors";

const LIMIT_BYTES = toBytes(BODY_LIMIT);

interface BodyContext {
  request: { body?: unknown; rawBody: string | undefined; type: string };
  req: IncomingMessage;
}

/**
 * The request's JSON body. The shared parser reads application/json; Petstore's user operations
 * declare no `consumes`, so swagger-client sends their JSON with no Content-Type (fetch then says
 * text/plain). Such bodies are read here, with the same limit and the same errors.
 */
export async function jsonBody(ctx: BodyContext): Promise<unknown> {
  if (ctx.request.rawBody !== undefined) return ctx.request.body; // parsed as application/json
  const type = ctx.request.type;
  if (type !== "" && type !== "text/plain") {
    throw new ApiError("VALIDATION_ERROR", "Request body must be JSON (Content-Type: application/json)", [
      { path: "(body)", message: `unsupported content type ${type}` },
    ]);
  }
  const raw = await readText(ctx.req);
  try {
    return JSON.parse(raw);
  } catch {
    throw new ApiError("VALIDATION_ERROR", "Request body is not valid JSON", [
      { path: "(body)", message: "invalid JSON" },
    ]);
  }
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16 * LIMIT_BYTES) {
      req.destroy(); // far past the limit: stop paying for the upload
      break;
    }
    // Past the limit keep draining without keeping, so the client still reads the 400 cleanly.
    if (size <= LIMIT_BYTES) chunks.push(chunk as Buffer);
  }
  if (size > LIMIT_BYTES) {
    throw new ApiError("VALIDATION_ERROR", `Request body is over ${BODY_LIMIT}`, [
      { path: "(body)", message: "too large" },
    ]);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function toBytes(limit: string): number {
  const match = /^(\d+)\s*(b|kb|mb)?$/i.exec(limit.trim());
  if (!match) throw new Error(`Unreadable body limit ${limit}`);
  const unit = (match[2] ?? "b").toLowerCase();
  return Number(match[1]) * (unit === "mb" ? 1024 * 1024 : unit === "kb" ? 1024 : 1);
}
