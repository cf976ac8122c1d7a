import type Router from "@koa/router";
import type { Context } from "koa";
import { getAddress } from "ethers";
import type { z } from "zod";
import {
  auditActor,
  collectionEntry,
  collectionFilterBeyond,
  type AccessControl,
  type AccessPrincipal,
  type AuditLog,
} from "../../access";
import type { SqlDriver, SqlExecutor } from "../../db";
import { ApiError } from "../../http/errors";
import { readJsonBody } from "../../http/json-body";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { parseBody, parseInput } from "../../http/validation";
import type { EndpointChanges, WebhookEndpoint, WebhookEndpointStore } from "../endpoint-store";
import type { DeliveryRecord, OutboxStore } from "../outbox";
import type { UrlGuard } from "../url-guard";
import { WebhookParams } from "./schemas";

/** What the /webhooks routes share, built once by openWebhooks. */
export interface WebhookRouteDeps {
  access: AccessControl;
  audit: AuditLog;
  db: SqlDriver;
  endpoints: WebhookEndpointStore;
  outbox: OutboxStore;
  guard: UrlGuard;
  /** A manual retry starts a new window this long. */
  retryWindowMs: number;
  /** Tells the delivery worker of this process to look now (a test event, a retry). */
  wake(): void;
  /** A configured chain's decimal id from its id or name (404 CHAIN_NOT_FOUND otherwise); unset = ids as given. */
  chainIdOf?: (chain: string) => string;
}

/** On /webhooks/{id}…, the endpoint of the path; none on /webhooks. */
type EndpointOf<Path extends string> = Path extends `/webhooks/{id}${string}` ? WebhookEndpoint : undefined;

/**
 * A /webhooks route as its file declares it. The router enforces the declaration before the
 * handler runs: a key with webhooks:manage, the path, query and body parsed (400), and on
 * /webhooks/{id}… the endpoint found among those the key manages (404). The handler answers the
 * body; the OpenAPI registration is made from the same declaration.
 */
interface WebhookRoute<Path extends string, Params extends z.ZodType, Query extends z.ZodType, Body extends z.ZodType> {
  method: "get" | "post" | "patch" | "delete";
  /** The OpenAPI path; `{name}` parameters are Koa's `:name`. */
  path: Path;
  operationId: string;
  summary: string;
  description?: string;
  /** The path's parameters: WebhookParams ({id}) unless said otherwise. */
  params?: Params;
  query?: Query;
  /** Every body carries a url, so it may also answer 400 WEBHOOK_URL_FORBIDDEN. */
  body?: Body;
  /** The success: its status, description and schema (none: no content). */
  answer: [status: number, description: string, schema?: z.ZodType];
  handle(request: {
    ctx: Context;
    deps: WebhookRouteDeps;
    endpoint: EndpointOf<Path>;
    params: z.output<Params>;
    query: z.output<Query>;
    body: z.output<Body>;
  }): Promise<unknown>;
}

const MANAGE = { scope: "webhooks:manage", key: "always" } as const;

export function webhookRoute<
  Path extends string,
  Params extends z.ZodType = typeof WebhookParams,
  Query extends z.ZodType = z.ZodUndefined,
  Body extends z.ZodType = z.ZodUndefined,
>(route: WebhookRoute<Path, Params, Query, Body>) {
  const params: z.ZodType | undefined = route.params ?? (route.path.includes("{id}") ? WebhookParams : undefined);
  const [status, description, schema] = route.answer;
  const content = (schema: z.ZodType) => ({ "application/json": { schema } });
  return {
    mount(router: Router, deps: WebhookRouteDeps): void {
      router[route.method](route.path.replace(/\{(\w+)\}/g, ":$1"), deps.access.require(MANAGE), async (ctx) => {
        const parsed = params ? (parseInput(params, ctx.params) as { id?: string }) : {};
        const endpoint = parsed.id === undefined ? undefined : await managedEndpoint(ctx, deps, parsed.id);
        const query = route.query && parseInput(route.query, ctx.query);
        const body = route.body && parseBody(route.body, await readJsonBody(ctx));
        const answer = await route.handle({ ctx, deps, endpoint, params: parsed, query, body } as never);
        ctx.status = status;
        if (answer !== undefined) ctx.body = answer;
      });
    },
    register(registry: OpenAPIRegistry): void {
      // The path's id is parsed too (at most 100 characters): a route with params answers 400 as well.
      const invalid = route.body
        ? "VALIDATION_ERROR or WEBHOOK_URL_FORBIDDEN"
        : (route.query || params) && "VALIDATION_ERROR";
      registry.registerPath({
        method: route.method,
        path: route.path,
        operationId: route.operationId,
        tags: ["webhooks"],
        summary: route.summary,
        description: route.description,
        security: [{ AccessKey: [] }],
        request: {
          params: params as z.ZodObject | undefined,
          query: route.query as z.ZodObject | undefined,
          body: route.body && { required: true, content: content(route.body) },
        },
        responses: {
          [status]: { description, ...(schema ? { content: content(schema) } : {}) },
          ...(invalid ? { 400: errorResponse(invalid) } : {}),
          ...(params ? { 404: errorResponse("NOT_FOUND") } : {}),
          401: errorResponse("UNAUTHORIZED"),
          403: errorResponse("FORBIDDEN"),
          429: errorResponse("RATE_LIMITED"),
        },
      });
    },
  };
}

/** The key whose endpoints the request manages: those it made; none for the root key, which manages all. */
export const ownerFilter = (ctx: Context) => (ctx.state.access as AccessPrincipal).keyId ?? undefined;

/** The endpoint `id` if the request's key manages it, else 404 NOT_FOUND (another key's is not shown). */
async function managedEndpoint(ctx: Context, deps: WebhookRouteDeps, id: string): Promise<WebhookEndpoint> {
  const endpoint = await deps.endpoints.find(id);
  const owner = ownerFilter(ctx);
  if (!endpoint || (owner !== undefined && endpoint.accessKeyId !== owner)) throw notFound();
  return endpoint;
}

const notFound = () => new ApiError("NOT_FOUND", "No webhook endpoint has this id");

/**
 * `change` and its audit event `action` (about the endpoint `change` answers) on one transaction;
 * 404 NOT_FOUND when `change` finds no endpoint (deleted meanwhile).
 */
export function audited<T extends { id: string }>(
  ctx: Context,
  deps: WebhookRouteDeps,
  action: string,
  change: (tx: SqlExecutor) => Promise<T | null>,
  details?: (changed: T) => Record<string, unknown>,
): Promise<T> {
  return deps.db.transaction(async (tx) => {
    const changed = await change(tx);
    if (!changed) throw notFound();
    const entry = { action, targetType: "webhook" as const, targetId: changed.id, details: details?.(changed) };
    await deps.audit.record(tx, auditActor(ctx), entry);
    return changed;
  });
}

/**
 * A body's fields as they are stored: events without repeats, filters lower-case without repeats
 * (a collection `<chain>:<address>` by its chain's id) and within the key's own limits (403 naming
 * what it does not hold), the url past the guard (400). On a change, `current` is the endpoint
 * before it: a filter is checked with the other filter it will have.
 */
export async function storedFields<T extends EndpointChanges>(
  ctx: Context,
  deps: Pick<WebhookRouteDeps, "guard" | "chainIdOf">,
  input: T,
  current?: WebhookEndpoint,
) {
  const normalized = (list: string[] | null | undefined) => list && [...new Set(list.map((a) => a.toLowerCase()))];
  const collection = (entry: string) => {
    const { chain, address } = collectionEntry(entry.toLowerCase());
    return chain === undefined ? address : `${deps.chainIdOf?.(chain) ?? chain}:${address}`;
  };
  const fields = {
    ...input,
    ...(input.events ? { events: [...new Set(input.events)] } : {}),
    ...(input.collections !== undefined
      ? { collections: input.collections && [...new Set(input.collections.map(collection))] }
      : {}),
    ...(input.wallets !== undefined ? { wallets: normalized(input.wallets) } : {}),
    ...(input.chains !== undefined ? { chains: input.chains && [...new Set(input.chains)] } : {}),
  };
  const principal = ctx.state.access as AccessPrincipal;
  const forbidden = (path: string, what: string, why = what): never => {
    throw new ApiError("FORBIDDEN", `This access key does not hold ${why}`, [{ path, message: what }]);
  };
  const outside = (own: readonly string[] | null, given: string[] | null | undefined) =>
    own === null || !given ? undefined : given.find((a) => !own.includes(a));
  const wallet = outside(principal.wallets, fields.wallets);
  if (wallet) forbidden("wallets", `the wallet ${wallet}`);
  const ownChains = principal.chains ?? null;
  const chain =
    outside(ownChains, fields.chains) ??
    outside(
      ownChains,
      fields.collections?.flatMap((entry) => collectionEntry(entry).chain ?? []),
    );
  if (chain) forbidden(fields.chains?.includes(chain) ? "chains" : "collections", `the chain ${chain}`);
  if (fields.collections !== undefined || fields.chains !== undefined) {
    const collections = fields.collections !== undefined ? fields.collections : (current?.collections ?? null);
    const chains = fields.chains !== undefined ? fields.chains : (current?.chains ?? null);
    const beyond = collectionFilterBeyond(principal.collections, collections, chains);
    if (beyond) {
      const what = `the collection ${beyond}`;
      // A bare address is on every chain the filter leaves: the key may hold it on some of them only.
      const onSome = !beyond.includes(":") && principal.collections?.some((entry) => entry.endsWith(`:${beyond}`));
      const why = `${what} on every chain of this filter (name its chains: "<chain>:<address>", or filter "chains")`;
      forbidden("collections", what, onSome ? why : what);
    }
  }
  if (fields.url !== undefined) await deps.guard.checkUrl(fields.url);
  return fields;
}

export function webhookView(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: withoutCredentials(endpoint.url),
    events: endpoint.events,
    ...(endpoint.collections ? { collections: endpoint.collections.map(collectionView) } : {}),
    ...(endpoint.wallets ? { wallets: endpoint.wallets.map((a) => getAddress(a)) } : {}),
    ...(endpoint.chains ? { chains: endpoint.chains } : {}),
    enabled: endpoint.enabled,
    disabledReason: endpoint.disabledReason,
    previousSecretExpiresAt: endpoint.previousSecretUntil?.toISOString() ?? null,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}

/** A stored `collections` entry as answered: the address checksummed, its chain (if any) before it. */
function collectionView(entry: string): string {
  const { chain, address } = collectionEntry(entry);
  return chain === undefined ? getAddress(address) : `${chain}:${getAddress(address)}`;
}

/** A URL with its user and password masked: they are never shown again once stored. */
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  if (parsed.username) parsed.username = "***";
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

/** A delivery as the API shows it: without the page cursor; its times become ISO 8601 in the JSON answer. */
export const deliveryView = ({ cursor: _cursor, ...delivery }: DeliveryRecord) => delivery;
