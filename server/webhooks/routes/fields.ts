import type { Context } from "koa";
import { getAddress } from "ethers";
import type { AccessPrincipal } from "../../access";
import { ApiError } from "../../http/errors";
import type { WebhookEndpoint } from "../endpoint-store";
import type { DeliveryRecord } from "../outbox";

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
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return url;
  if (parsed.username) parsed.username = "***";
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

/** A delivery as the API shows it: without the page cursor; its times become ISO 8601 in the JSON answer. */
export const deliveryView = ({ cursor: _cursor, ...delivery }: DeliveryRecord) => delivery;
