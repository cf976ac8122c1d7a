import Router from "@koa/router";
import type { Context } from "koa";
import type { AccessPrincipal } from "../access";
import { walletNotFound } from "../http/errors";
import type { TransactionSigner } from "../signers/signer";
import { fingerprintOf, idempotencyKeyOf, type OperationKind, type WriteAnswer } from "../engine";
import { currentVia } from "../mcp/trace";
import type { OpenAPIRegistry } from "../http/openapi";
import { readJsonBody } from "../http/json-body";
import { parseBody } from "../http/validation";
import { z } from "zod";
import { addToWhitelistRoute } from "./add-to-whitelist";
import { airdropRoute } from "./airdrop";
import { allowlistMintRoute } from "./allowlist-mint";
import { batchWhitelistRoute } from "./batch-whitelist";
import { createVoucherRoute } from "./create-voucher";
import { mintWithVoucherRoute } from "./mint-with-voucher";
import { putAllowlistRoute } from "./put-allowlist";
import { setRoyaltyRoute } from "./set-royalty";
import { deployRoute } from "./deploy";
import { mintRoute } from "./mint";
import { mintForFreeRoute } from "./mint-for-free";
import { mountListOperations, registerListOperationsOpenApi } from "./list-operations";
import { mountOperationRoute, registerOperationOpenApi } from "./operations";
import { IdempotencyHeaders, openApiResponses, type NftDeps, type NftRoute, type WriteRoute } from "./route";
import { setCostRoute } from "./set-cost";
import { setPausedRoute } from "./set-paused";
import { tokenUriRoute } from "./token-uri";
import { totalSupplyRoute } from "./total-supply";
import { withdrawRoute } from "./withdraw";

/** What operations made by the root key (API_KEY) record as their access key. */
export const ROOT_KEY_ID = "root";

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
  airdropRoute,
  batchWhitelistRoute,
  allowlistMintRoute,
  mintWithVoucherRoute,
  setRoyaltyRoute,
  putAllowlistRoute,
  createVoucherRoute,
] as NftRoute[];

/** What every /nft body holds once parsed: exactly one of `privateKey` and `from`. */
type NftInput = Record<string, unknown> & { privateKey?: string; from?: string };

const WRITE_ROUTES = NFT_ROUTES.filter((route): route is WriteRoute => route.kind === "write");

/** How the engine reads each write's answer from its receipt, by operation name. */
export const OPERATION_KINDS = new Map<string, OperationKind>(
  WRITE_ROUTES.map((route) => [route.operation, { successStatus: route.successStatus ?? 200, result: route.result }]),
);

/**
 * Every /nft operation: POST, JSON body validated by the operation's schema; and GET
 * /nft/operations/{id}. What a route declares is enforced here, in order: the access key before the
 * body is read (a call without one gets 401 whatever it sends), then the body's collection and
 * wallet against the key's limits, before the route sees the body.
 */
export function createNftRouter(deps: NftDeps): Router {
  const router = new Router();
  for (const route of NFT_ROUTES) {
    router[route.method ?? "post"](koaPath(route.path), async (ctx) => {
      await deps.access.admit(ctx, route.access);
      const body = withPathFields(route, ctx, await readJsonBody(ctx, route.bodyLimit));
      const input = (route.parse ? route.parse(body) : parseBody(route.body, body)) as NftInput;
      const caller = await callerOf(ctx, route, input, deps);
      if (route.kind === "read") {
        ctx.body = await route.handle(input, { ...deps, caller });
        noticeCollection(deps, input);
        return;
      }
      if (ctx.query.dryRun === "true") {
        ctx.body = await dryRun(route, input, caller, deps);
        return;
      }
      const answer = await runWrite(route, input, caller, deps, ctx);
      if (answer.status < 300) noticeCollection(deps, route.operation === "deploy" ? {} : input, answer);
      if (answer.status < 300 && !answer.replayed) await route.answered?.(answer, input, deps);
      respond(ctx, answer);
    });
  }
  if (deps.operationList)
    mountListOperations(router, { list: deps.operationList, chain: deps.chain, access: deps.access });
  mountOperationRoute(router, deps);
  return router;
}

/** Koa's form of an OpenAPI path: `{address}` → `:address`. */
const koaPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

/** The body with the route's path parameters in it (a body that is no object is left for the schema to refuse). */
function withPathFields(route: NftRoute, ctx: Context, body: unknown): unknown {
  if (!route.pathFields || typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const fields = Object.fromEntries(
    Object.entries(route.pathFields).map(([field, param]) => [field, ctx.params[param]]),
  );
  return { ...body, ...fields };
}

/**
 * Registers the collection a request acted on with the index (once per process: no query, no chain
 * call after the first time). A deployment answered 201 is registered from its own block (its
 * body's contractAddress is ignored: a pending one is registered when a request names it).
 */
function noticeCollection(deps: NftDeps, input: NftInput, answer?: WriteAnswer): void {
  if (!deps.collections) return;
  if (answer?.status === 201) {
    const { contractAddress, blockNumber } = JSON.parse(answer.body) as {
      contractAddress?: string;
      blockNumber?: number;
    };
    if (contractAddress && typeof blockNumber === "number")
      deps.collections.register(contractAddress, "deploy", blockNumber).catch(() => {});
    return;
  }
  if (typeof input.contractAddress === "string") deps.collections.notice(input.contractAddress);
}

/** Who signs (or asks): the request's own key, or a wallet the service holds, within the access key's limits. */
async function callerOf(ctx: Context, route: NftRoute, input: NftInput, deps: NftDeps): Promise<TransactionSigner> {
  deps.access.checkBody(ctx, route.access, input);
  if (input.privateKey !== undefined) return deps.chain.signers.get(input.privateKey);
  if (!deps.wallets) throw walletNotFound();
  const principal = ctx.state.access as AccessPrincipal;
  return deps.wallets.signerFor(input.from!, principal.wallets);
}

/** A write through the engine: Idempotency-Key replay first, then the route's plan. */
async function runWrite(
  route: WriteRoute,
  input: NftInput,
  signer: TransactionSigner,
  deps: NftDeps,
  ctx: Context,
): Promise<WriteAnswer> {
  const idempotencyKey = idempotencyKeyOf(ctx.get("Idempotency-Key") || undefined);
  const fingerprint = fingerprintOf(route.operation, input);
  if (idempotencyKey) {
    const replayed = await deps.engine.replay(signer.address, idempotencyKey, fingerprint);
    if (replayed) return replayed;
  }
  const plan = await route.plan(input, { ...deps, signer });
  const principal = ctx.state.access as AccessPrincipal | undefined;
  const request = {
    operation: route.operation,
    signer,
    fingerprint,
    idempotencyKey,
    accessKeyId: principal ? (principal.keyId ?? ROOT_KEY_ID) : null,
    via: currentVia(),
  };
  if ("unchanged" in plan) {
    return deps.engine.recordUnchanged({ ...request, context: plan.unchanged }, plan.contractAddress);
  }
  return deps.engine.submit({ ...request, ...plan.call, context: plan.context });
}

/**
 * `?dryRun=true`: the write planned and simulated as it would be sent, with nothing recorded, signed
 * or sent: the call, gas, fee and cost in wei, and the result fields the plan already knows.
 */
async function dryRun(route: WriteRoute, input: NftInput, signer: TransactionSigner, deps: NftDeps) {
  const plan = await route.plan(input, { ...deps, signer });
  if ("unchanged" in plan)
    return { dryRun: true, operation: route.operation, changed: false, costWei: "0", result: plan.unchanged };
  return {
    dryRun: true,
    operation: route.operation,
    changed: true,
    ...(await deps.engine.preview({ signer, ...plan.call })),
    result: plan.context,
  };
}

function respond(ctx: Context, answer: WriteAnswer): void {
  ctx.status = answer.status;
  ctx.type = "application/json; charset=utf-8";
  ctx.body = answer.body;
  if (answer.replayed) ctx.set("Idempotent-Replayed", "true");
}

export function registerNftOpenApi(registry: OpenAPIRegistry): void {
  for (const route of NFT_ROUTES) {
    const pathParams = route.pathFields
      ? { params: z.object(Object.fromEntries(Object.values(route.pathFields).map((p) => [p, z.string()]))) }
      : {};
    registry.registerPath({
      method: route.method ?? "post",
      path: route.path,
      operationId: route.operation,
      tags: ["nft"],
      summary: route.summary,
      description: route.description,
      // An access key always for `always` routes; for open ones, only with REQUIRE_ACCESS_KEY or `from`.
      security: route.access.key === "always" ? [{ AccessKey: [] }] : [{}, { AccessKey: [] }],
      request: {
        ...pathParams,
        body: { required: true, content: { "application/json": { schema: route.body } } },
        ...(route.kind === "write" ? { headers: IdempotencyHeaders } : {}),
      },
      responses: openApiResponses(route),
    });
  }
  registerListOperationsOpenApi(registry);
  registerOperationOpenApi(registry);
}
