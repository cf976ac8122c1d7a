import type { Context } from "koa";
import { getAddress } from "ethers";
import type { AccessPrincipal } from "../../access";
import { ApiError } from "../../http/errors";
import type { EndpointChanges, WebhookEndpoint } from "../endpoint-store";
import type { UrlGuard } from "../url-guard";
import type { DeliveryRecord } from "../outbox";

/**
 * A body's fields as they are stored: events without repeats, filters lower-case without repeats
 * and within the key's own limits (403 naming what it does not hold), the url past the guard (400).
 */
export async function storedFields<T extends EndpointChanges>(ctx: Context, guard: UrlGuard, input: T) {
  const normalized = (list: string[] | null | undefined) => list && [...new Set(list.map((a) => a.toLowerCase()))];
  const fields = {
    ...input,
    ...(input.events ? { events: [...new Set(input.events)] } : {}),
    ...(input.collections !== undefined ? { collections: normalized(input.collections) } : {}),
    ...(input.wallets !== undefined ? { wallets: normalized(input.wallets) } : {}),
  };
  const principal = ctx.state.access as AccessPrincipal;
  const outside = (own: readonly string[] | null, given: string[] | null | undefined) =>
    own === null || !given ? undefined : given.find((a) => !own.includes(a));
  const collection = outside(principal.collections, fields.collections);
  const wallet = outside(principal.wallets, fields.wallets);
  if (collection || wallet) {
    const what = collection ? `the collection ${collection}` : `the wallet ${wallet}`;
    throw new ApiError("FORBIDDEN", `This access key does not hold ${what}`, [
      { path: collection ? "collections" : "wallets", message: what },
    ]);
  }
  if (fields.url !== undefined) await guard.checkUrl(fields.url);
  return fields;
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
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  if (parsed.username) parsed.username = "***";
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

/** A delivery as the API shows it: without the page cursor; its times become ISO 8601 in the JSON answer. */
export const deliveryView = ({ cursor: _cursor, ...delivery }: DeliveryRecord) => delivery;
