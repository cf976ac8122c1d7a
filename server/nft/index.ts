import Router from "@koa/router";
import type { Context } from "koa";
import { fingerprintOf, idempotencyKeyOf, type OperationKind, type WriteAnswer } from "../engine";
import type { OpenAPIRegistry } from "../http/openapi";
import { readJsonBody } from "../http/json-body";
import { parseInput } from "../http/validation";
import { addToWhitelistRoute } from "./add-to-whitelist";
import { assertApiKey } from "./api-key";
import { deployRoute } from "./deploy";
import { mintRoute } from "./mint";
import { mintForFreeRoute } from "./mint-for-free";
import { mountOperationRoute, registerOperationOpenApi } from "./operations";
import { IdempotencyHeaders, openApiResponses, type NftDeps, type NftRoute, type WriteRoute } from "./route";
import { setCostRoute } from "./set-cost";
import { setPausedRoute } from "./set-paused";
import { tokenUriRoute } from "./token-uri";
import { totalSupplyRoute } from "./total-supply";
import { withdrawRoute } from "./withdraw";

export type { NftDeps };

export const NFT_ROUTES: NftRoute[] = [
  tokenUriRoute,
  mintRoute,
  mintForFreeRoute,
  addToWhitelistRoute,
  setPausedRoute,
  setCostRoute,
  totalSupplyRoute,
  withdrawRoute,
  deployRoute,
] as NftRoute[];

type WriteInput = Record<string, unknown> & { privateKey: string };

const WRITE_ROUTES = NFT_ROUTES.filter((route): route is WriteRoute => route.kind === "write");

/** How the engine reads each write's answer from its receipt, by operation name. */
export const OPERATION_KINDS = new Map<string, OperationKind>(
  WRITE_ROUTES.map((route) => [route.operation, { successStatus: route.successStatus ?? 200, result: route.result }]),
);

/** Every /nft operation: POST, JSON body validated by the operation's schema; and GET /nft/operations/{id}. */
export function createNftRouter(deps: NftDeps): Router {
  const router = new Router();
  for (const route of NFT_ROUTES) {
    router.post(route.path, async (ctx) => {
      // What the route declares is checked before its body is read: a call without the key gets 401, whatever it sends.
      if (route.apiKey) assertApiKey(ctx, deps.apiKey);
      const input = parseInput(route.body, await readJsonBody(ctx));
      if (route.kind === "read") {
        ctx.body = await route.handle(input, deps);
        return;
      }
      respond(ctx, await runWrite(route, input as WriteInput, deps, ctx));
    });
  }
  mountOperationRoute(router, deps);
  return router;
}

/** A write through the engine: Idempotency-Key replay first, then the route's plan. */
async function runWrite(route: WriteRoute, input: WriteInput, deps: NftDeps, ctx: Context): Promise<WriteAnswer> {
  const signer = deps.chain.signers.get(input.privateKey);
  const idempotencyKey = idempotencyKeyOf(ctx.get("Idempotency-Key") || undefined);
  const fingerprint = fingerprintOf(route.operation, input);
  if (idempotencyKey) {
    const replayed = await deps.engine.replay(signer.address, idempotencyKey, fingerprint);
    if (replayed) return replayed;
  }
  const plan = await route.plan(input, { ...deps, signer });
  const request = { operation: route.operation, signer, fingerprint, idempotencyKey };
  if ("unchanged" in plan) {
    return deps.engine.recordUnchanged({ ...request, context: plan.unchanged }, plan.contractAddress);
  }
  return deps.engine.submit({ ...request, ...plan.call, context: plan.context });
}

function respond(ctx: Context, answer: WriteAnswer): void {
  ctx.status = answer.status;
  ctx.type = "application/json; charset=utf-8";
  ctx.body = answer.body;
  if (answer.replayed) ctx.set("Idempotent-Replayed", "true");
}

export function registerNftOpenApi(registry: OpenAPIRegistry): void {
  registry.registerComponent("securitySchemes", "ApiKey", { type: "apiKey", in: "header", name: "API_KEY" });
  for (const route of NFT_ROUTES) {
    registry.registerPath({
      method: "post",
      path: route.path,
      operationId: route.operation,
      tags: ["nft"],
      summary: route.summary,
      description: route.description,
      ...(route.apiKey ? { security: [{ ApiKey: [] }] } : {}),
      request: {
        body: { required: true, content: { "application/json": { schema: route.body } } },
        ...(route.kind === "write" ? { headers: IdempotencyHeaders } : {}),
      },
      responses: openApiResponses(route),
    });
  }
  registerOperationOpenApi(registry);
}
