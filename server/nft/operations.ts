import type Router from "@koa/router";
import { z } from "zod";
import { allows, type AccessPrincipal } from "../access";
import { OperationView, operationView, type Operation } from "../engine";
import { ApiError } from "../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../http/openapi";
import type { NftDeps } from "./route";

const OperationParams = z.object({
  operationId: z.string().openapi({ example: "6f1c1a52-5d0e-4a59-9d67-2f0f5a0c8e11" }),
});

/**
 * GET /nft/operations/{operationId}: where a write stands, also after its request was answered.
 * Without a key the unguessable id is enough (open mode); a key sees only what it could have made.
 */
export function mountOperationRoute(router: Router, deps: Pick<NftDeps, "engine" | "access">): void {
  router.get("/nft/operations/:operationId", deps.access.require(OPERATION_ACCESS), async (ctx) => {
    const op = await deps.engine.find(ctx.params.operationId);
    const principal = ctx.state.access as AccessPrincipal | undefined;
    if (!op || (principal && !couldHaveMade(principal, op))) {
      throw new ApiError("OPERATION_NOT_FOUND", `No operation ${ctx.params.operationId.slice(0, 80)}`);
    }
    ctx.body = operationView(op);
  });
}

export const OPERATION_ACCESS = { scope: "nft:read", key: "open" } as const;

/**
 * Its own operations, or ones on its collections signed by a wallet within its limits. A deployment
 * is on the collection it made; one that names no collection (a nonce fill, a deployment not yet
 * mined) is not on any of a collection-limited key's collections. Only on the key's chains.
 */
export function couldHaveMade(principal: AccessPrincipal, op: Operation): boolean {
  // Another chain's is not its to read, whoever made it (API.md, "Chains": access keys).
  if (principal.chains && !principal.chains.includes(op.chainId)) return false;
  if (principal.keyId !== null && op.accessKeyId === principal.keyId) return true;
  if (principal.collections && !op.contractAddress) return false;
  return allows(principal, {
    collection: op.contractAddress ?? undefined,
    chain: op.chainId,
    wallet: principal.wallets ? op.from : undefined,
  });
}

export function registerOperationOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/nft/operations/{operationId}",
    operationId: "getOperation",
    tags: ["nft"],
    summary: "An operation: a write's status, transactions, result or error",
    security: [{}, { AccessKey: [] }],
    request: { params: OperationParams },
    responses: {
      200: { description: "The operation", content: { "application/json": { schema: OperationView } } },
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("OPERATION_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
