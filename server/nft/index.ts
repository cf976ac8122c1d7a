import Router from "@koa/router";
import type { Context } from "koa";
import { ruleHolds, type AccessControl, type AccessPrincipal } from "../access";
import type { ApprovalDesk } from "../approvals";
import type { ChainClient } from "../chain/chain-client";
import type { ChainRegistry, RegisteredChain } from "../chains/registry";
import type { CollectionIndex } from "../collections";
import type { DropsDeps } from "../drops/deps";
import type { MetadataDeps } from "../metadata/deps";
import type { OperationList } from "../engine/operation-list";
import type { HeldWallets } from "../signers/signer";
import { ApiError, walletNotFound } from "../http/errors";
import type { TransactionSigner } from "../signers/signer";
import {
  fingerprintOf,
  idempotencyKeyOf,
  type OperationKind,
  type TransactionEngine,
  type WriteAnswer,
} from "../engine";
import { currentVia } from "../http/tool-call";
import { BODY_FROM_PATH, type OpenAPIRegistry } from "../http/openapi";
import { address } from "../http/fields";
import { readJsonBody } from "../http/json-body";
import { parseBody } from "../http/validation";
import { z } from "zod";
import { addToWhitelistRoute } from "./add-to-whitelist";
import { airdropRoute } from "./airdrop";
import { allowlistMintRoute } from "./allowlist-mint";
import { batchWhitelistRoute } from "./batch-whitelist";
import { createEditionRoute } from "./create-edition";
import { createVoucherRoute } from "./create-voucher";
import { mintWithVoucherRoute } from "./mint-with-voucher";
import { checkoutRoute } from "./checkout";
import { mintWithPermitRoute } from "./mint-with-permit";
import { setPaymentTokenRoute } from "./set-payment-token";
import { putAllowlistRoute } from "./put-allowlist";
import { setRoyaltyRoute } from "./set-royalty";
import { deployRoute } from "./deploy";
import { mintRoute } from "./mint";
import { mintForFreeRoute } from "./mint-for-free";
import { mountListOperations, registerListOperationsOpenApi } from "./list-operations";
import { mountOperationRoute, registerOperationOpenApi } from "./operations";
import {
  IdempotencyHeaders,
  nftQuery,
  openApiResponses,
  type NftDeps,
  type NftRoute,
  type WritePlan,
  type WriteRoute,
} from "./route";
import { inContractWords } from "./revert-context";
import { setCostRoute } from "./set-cost";
import { setPausedRoute } from "./set-paused";
import { tokenUriRoute } from "./token-uri";
import { totalSupplyRoute } from "./total-supply";
import { withdrawRoute } from "./withdraw";
import { METADATA_WRITE_ROUTES } from "../metadata/write-routes";

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
  createEditionRoute,
  setPaymentTokenRoute,
  checkoutRoute,
  mintWithPermitRoute,
  ...METADATA_WRITE_ROUTES,
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
export function createNftRouter(routerDeps: NftRouterDeps): Router {
  const router = new Router();
  const { chains } = routerDeps;
  // Each chain's dependencies, made once: a request resolves its chain and takes that chain's.
  const unitDeps = new Map(
    chains.units.map((unit) => [
      unit,
      {
        chain: unit.client,
        engine: unit.engine,
        access: routerDeps.access,
        wallets: routerDeps.wallets,
        collections: unit.collections,
        operationList: routerDeps.operationList,
        drops: unit.drops,
        metadata: unit.metadata,
      } satisfies NftDeps,
    ]),
  );
  for (const route of NFT_ROUTES) {
    router[route.method ?? "post"](koaPath(route.path), async (ctx) => {
      await routerDeps.access.admit(ctx, route.access);
      // A chain `?chain=` names is the key's before a byte of the body is read (API.md, "Chains").
      const queried = chainOfQuery(ctx);
      const named = queried === undefined ? undefined : chains.resolve(queried);
      if (named) routerDeps.access.checkChain(ctx, named);
      const body = withPathFields(route, ctx, await readJsonBody(ctx, route.bodyLimit));
      const unit = chains.resolve(chainOfBody(body) ?? queried);
      if (named && unit !== named)
        throw new ApiError("VALIDATION_ERROR", "The body's chain is not the one ?chain= names", [
          { path: "chain", message: `not ${named.name} (?chain=)` },
        ]);
      routerDeps.access.checkChain(ctx, unit);
      const deps = unitDeps.get(unit)!;
      const held = { desk: routerDeps.approvals, chain: { id: unit.id, name: unit.name } };
      const parsed = (route.parse ? route.parse(body) : parseBody(route.body, body)) as NftInput;
      // The chain is where the request goes, not what it asks: idempotency records are per chain already.
      const { chain: _chain, ...input } = parsed;
      const caller = await callerOf(ctx, route, input, deps);
      // A revert is answered naming the request's collection (and its cap, read then).
      const inWords = async (err: unknown) => Promise.reject(await inContractWords(err, input, deps.chain));
      if (route.kind === "read") {
        // A signerless read's caller is undefined: its handler never reads it (ReadRoute.signerless).
        ctx.body = await route.handle(input, { ...deps, caller: caller! }).catch(inWords);
        noticeCollection(deps, input);
        return;
      }
      const dryRunAsked = ctx.query.dryRun;
      if (dryRunAsked !== undefined && dryRunAsked !== "true" && dryRunAsked !== "false")
        throw new ApiError("VALIDATION_ERROR", "dryRun must be true or false", [
          { path: "dryRun", message: "must be true or false" },
        ]);
      if (dryRunAsked === "true") {
        ctx.body = await dryRun(route, input, caller!, deps, ctx.state.access as AccessPrincipal | undefined).catch(
          inWords,
        );
        return;
      }
      const answer = await runWrite(route, input, caller!, deps, ctx, held).catch(inWords);
      if (answer.status < 300) noticeCollection(deps, route.operation === "deploy" ? {} : input, answer);
      // A held write has done nothing yet: what a route keeps beside its answer waits (see docs/approvals.md).
      if (answer.status < 300 && !answer.held) await route.answered?.(answer, input, deps);
      respond(ctx, answer);
    });
  }
  if (routerDeps.operationList)
    mountListOperations(router, { list: routerDeps.operationList, chains, access: routerDeps.access });
  // An operation's id names its chain: any chain's engine reads it.
  mountOperationRoute(router, { engine: chains.units[0].engine, access: routerDeps.access });
  return router;
}

/** What the /nft routes use of a chain's unit; the index, drops and metadata are optional (a test may route to a client and an engine alone). */
export interface NftChain extends RegisteredChain {
  readonly client: ChainClient;
  readonly engine: TransactionEngine;
  readonly collections?: CollectionIndex;
  readonly drops?: DropsDeps;
  readonly metadata?: MetadataDeps;
}

/** What the /nft router needs: the chains (each request takes its chain's client, engine, index and drops), and what is shared. */
export interface NftRouterDeps {
  chains: ChainRegistry<NftChain>;
  access: AccessControl;
  wallets?: HeldWallets;
  operationList?: OperationList;
  /** Where a write its key's approval rule holds waits for a decision; unset = no write is held. */
  approvals?: ApprovalDesk;
}

/** Where a write of this request would be held: the desk, and the chain it is on. */
interface HeldAt {
  desk?: ApprovalDesk;
  chain: { id: string; name: string };
}

/** `?chain=`, when the query names one. */
function chainOfQuery(ctx: Context): string | undefined {
  const named = Array.isArray(ctx.query.chain) ? ctx.query.chain[0] : ctx.query.chain;
  return named === undefined || named === "" ? undefined : named;
}

/** A body's `chain`, if it is an object that has one. */
function chainOfBody(body: unknown): unknown {
  return typeof body === "object" && body !== null && !Array.isArray(body)
    ? (body as Record<string, unknown>).chain
    : undefined;
}

/** The chain the body's `chain` names, else `?chain=`; both naming different chains is a 400. */
/** Koa's form of an OpenAPI path: `{address}` → `:address`. */
const koaPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

/**
 * The body with the route's path parameters in it (a body that is no object is left for the schema
 * to refuse). The path names the collection: a body that names another one is a 400, never
 * silently overruled.
 */
function withPathFields(route: NftRoute, ctx: Context, body: unknown): unknown {
  if (!route.pathFields || typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const fields: Record<string, unknown> = {};
  for (const [field, param] of Object.entries(route.pathFields)) {
    const fromPath = ctx.params[param];
    const given = (body as Record<string, unknown>)[field];
    if (given !== undefined && (typeof given !== "string" || given.toLowerCase() !== fromPath?.toLowerCase()))
      throw new ApiError(
        "VALIDATION_ERROR",
        `The path's {${param}} names the collection; leave ${field} out of the body`,
        [{ path: field, message: `not the path's {${param}} (${fromPath}); leave it out` }],
      );
    fields[field] = fromPath;
  }
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

/**
 * Who signs (or asks): the request's own key, or a wallet the service holds, within the access key's
 * limits; none for a signerless read (a write always has one: its body's schema requires it).
 */
async function callerOf(
  ctx: Context,
  route: NftRoute,
  input: NftInput,
  deps: NftDeps,
): Promise<TransactionSigner | undefined> {
  deps.access.checkBody(ctx, route.access, input);
  if (route.kind === "read" && route.signerless) return undefined;
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
  held: HeldAt,
): Promise<WriteAnswer> {
  const idempotencyKey = idempotencyKeyOf(ctx.get("Idempotency-Key") || undefined);
  await route.precheck?.(input, { ...deps, signer });
  const fingerprint = fingerprintOf(route.operation, input);
  if (idempotencyKey) {
    const replayed = await deps.engine.replay(signer.address, idempotencyKey, fingerprint);
    if (replayed) return replayed;
  }
  const plan = await route.plan(input, { ...deps, signer });
  if (route.failed && !("unchanged" in plan)) {
    try {
      return await submitPlan(route, input, signer, deps, ctx, plan, fingerprint, idempotencyKey, held);
    } catch (err) {
      await route.failed(input, deps).catch(() => {});
      throw err;
    }
  }
  return submitPlan(route, input, signer, deps, ctx, plan, fingerprint, idempotencyKey, held);
}

function submitPlan(
  route: WriteRoute,
  input: NftInput,
  signer: TransactionSigner,
  deps: NftDeps,
  ctx: Context,
  plan: WritePlan,
  fingerprint: string,
  idempotencyKey: ReturnType<typeof idempotencyKeyOf>,
  held: HeldAt,
): Promise<WriteAnswer> {
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
  const write = { ...request, ...plan.call, context: plan.context };
  if (principal && heldByRule(principal, route, input, write.value)) {
    if (!held.desk)
      throw new ApiError("FORBIDDEN", "This access key's writes need approval, and no approvals are kept here");
    const named = typeof input.contractAddress === "string" ? input.contractAddress : plan.call.to;
    const collection = route.operation === "deploy" ? null : (named ?? null);
    return held.desk.hold({ request: write, engine: deps.engine, chain: held.chain, collection, principal });
  }
  return deps.engine.submit(write);
}

/** Whether the caller's approval rule holds this write (its operation, the call's value, the mintAmount asked). */
function heldByRule(
  principal: AccessPrincipal | undefined,
  route: WriteRoute,
  input: NftInput,
  value: bigint | undefined,
): boolean {
  const mintAmount = typeof input.mintAmount === "bigint" ? input.mintAmount : undefined;
  return !!principal && ruleHolds(principal.approval, { operation: route.operation, value: value ?? 0n, mintAmount });
}

/**
 * `?dryRun=true`: the write planned and simulated as it would be sent, with nothing recorded, signed
 * or sent: the call, gas, fee and cost in wei, the result fields the plan already knows, and
 * whether the key's approval rule would hold it.
 */
async function dryRun(
  route: WriteRoute,
  input: NftInput,
  signer: TransactionSigner,
  deps: NftDeps,
  principal: AccessPrincipal | undefined,
) {
  // The route's own refusals first, as a real write meets them (an allowlist on an edition contract: 400).
  await route.precheck?.(input, { ...deps, signer });
  const plan = await route.plan(input, { ...deps, signer, dryRun: true });
  if ("unchanged" in plan)
    return {
      status: "planned",
      dryRun: true,
      operation: route.operation,
      changed: false,
      costWei: "0",
      result: plan.unchanged,
    };
  return {
    // "planned" tells it from a write's answer (status confirmed or pending) in one union, for typed clients.
    status: "planned",
    dryRun: true,
    operation: route.operation,
    changed: true,
    ...(await deps.engine.preview({ signer, ...plan.call })),
    ...(heldByRule(principal, route, input, plan.call.value) ? { approvalRequired: true as const } : {}),
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
    // A path field stands for a body field (contractAddress): documented as that field is.
    const pathParams = route.pathFields
      ? {
          params: z.object(
            Object.fromEntries(
              Object.values(route.pathFields).map((p) => [
                p,
                address(p).openapi({
                  description: "The collection; the body leaves contractAddress out (one naming another is a 400)",
                }),
              ]),
            ),
          ),
        }
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
        query: nftQuery(route),
        body: { required: true, content: { "application/json": { schema: route.body } } },
        ...(route.kind === "write" ? { headers: IdempotencyHeaders } : {}),
      },
      responses: openApiResponses(route),
      // The body's fields the path gives: optional in the document (buildOpenApiDocument).
      ...(route.pathFields ? { [BODY_FROM_PATH]: Object.keys(route.pathFields) } : {}),
    });
  }
  registerListOperationsOpenApi(registry);
  registerOperationOpenApi(registry);
}
