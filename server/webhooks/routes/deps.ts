import type { Context } from "koa";
import { getAddress } from "ethers";
import type { AccessControl, AccessPrincipal, AuditLog } from "../../access";
import type { SqlDriver } from "../../db";
import { ApiError } from "../../http/errors";
import { errorResponse } from "../../http/openapi";
import type { WebhookEndpoint, WebhookEndpointStore } from "../endpoint-store";
import type { OutboxStore } from "../outbox";
import type { UrlGuard } from "../url-guard";

/** What the /webhooks routes share, built once by createWebhookRouter. */
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
}

export const MANAGE = { scope: "webhooks:manage", key: "always" } as const;

export const security = [{ AccessKey: [] }];
export const denied = {
  401: errorResponse("UNAUTHORIZED"),
  403: errorResponse("FORBIDDEN"),
  429: errorResponse("RATE_LIMITED"),
};

/** The root key manages every endpoint; another key, those it made. */
export function ownerFilter(ctx: Context): string | null | undefined {
  const principal = ctx.state.access as AccessPrincipal;
  return principal.keyId === null ? undefined : principal.keyId;
}

/** The endpoint `id` if the request's key manages it, else 404 NOT_FOUND (another key's is not shown). */
export async function managedEndpoint(ctx: Context, deps: WebhookRouteDeps, id: string): Promise<WebhookEndpoint> {
  const endpoint = await deps.endpoints.find(id);
  const owner = ownerFilter(ctx);
  if (!endpoint || (owner !== undefined && endpoint.accessKeyId !== owner)) {
    throw new ApiError("NOT_FOUND", "No webhook endpoint has this id");
  }
  return endpoint;
}

/** Filters must stay within the key's own limits: 403 naming what it does not hold. */
export function checkFilters(
  ctx: Context,
  filters: { collections?: string[] | null; wallets?: string[] | null },
): void {
  const principal = ctx.state.access as AccessPrincipal;
  const outside = (own: readonly string[] | null, given: string[] | null | undefined) =>
    own === null || !given ? undefined : given.find((a) => !own.includes(a));
  const collection = outside(principal.collections, filters.collections);
  const wallet = outside(principal.wallets, filters.wallets);
  if (collection || wallet) {
    const what = collection ? `the collection ${collection}` : `the wallet ${wallet}`;
    throw new ApiError("FORBIDDEN", `This access key does not hold ${what}`, [
      { path: collection ? "collections" : "wallets", message: what },
    ]);
  }
}

/** Lower-case, without repeats: how filters are stored and compared. */
export function normalized(list: string[] | null | undefined): string[] | null | undefined {
  return list ? [...new Set(list.map((a) => a.toLowerCase()))] : list;
}

export function webhookView(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: withoutCredentials(endpoint.url),
    events: endpoint.events,
    ...(endpoint.collections ? { collections: endpoint.collections.map((a) => getAddress(a)) } : {}),
    ...(endpoint.wallets ? { wallets: endpoint.wallets.map((a) => getAddress(a)) } : {}),
    enabled: endpoint.enabled,
    disabledReason: endpoint.disabledReason,
    previousSecretExpiresAt: endpoint.previousSecretUntil?.toISOString() ?? null,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}

/** A URL with its user and password masked: they are never shown again once stored. */
export function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  if (parsed.username) parsed.username = "***";
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
