import { collectionEntry } from "../http/fields";
import type { ApprovalRule } from "./approval-rule";
import type { Scope } from "./scopes";
import { SCOPES } from "./scopes";

/** Who a request acts as: the root key (API_KEY) or an access key made through the API. */
export interface AccessPrincipal {
  /** The access key's id; null for the root key. */
  keyId: string | null;
  name: string;
  scopes: ReadonlySet<Scope>;
  /** Wallet addresses (lower case) the key may sign with; null = all. */
  wallets: readonly string[] | null;
  /**
   * Collections (lower case) the key may act on: an address (on every chain) or `<chain id>:<address>`
   * (on that chain only); null = all.
   */
  collections: readonly string[] | null;
  /** Chains (decimal ids) the key may act on; null (or absent) = all. */
  chains?: readonly string[] | null;
  expiresAt: Date | null;
  /** Writes that wait for a person's decision (approval-rule.ts); null or absent = none. */
  approval?: ApprovalRule | null;
}

export const ROOT_PRINCIPAL: AccessPrincipal = {
  keyId: null,
  name: "root (API_KEY)",
  scopes: new Set(SCOPES),
  wallets: null,
  collections: null,
  expiresAt: null,
};

/** What a request needs: a scope, and possibly a wallet or a collection within the key's limits. */
export interface AccessNeed {
  scope?: Scope;
  wallet?: string;
  collection?: string;
  /** The chain (decimal id) the collection is on; unset = the address alone is compared. */
  chain?: string;
}

/** What `principal` lacks for `need`, in words (for the 403), or null when it is allowed. */
export function missingFor(principal: AccessPrincipal, need: AccessNeed): string | null {
  if (need.scope && !principal.scopes.has(need.scope)) return `the scope ${need.scope}`;
  if (need.wallet && !within(principal.wallets, need.wallet)) return `the wallet ${need.wallet}`;
  if (need.collection && !holdsCollection(principal.collections, need.collection, need.chain))
    return `the collection ${need.collection}${onOtherChain(principal.collections, need) ? ` on chain ${need.chain}` : ""}`;
  return null;
}

export function allows(principal: AccessPrincipal, need: AccessNeed): boolean {
  return missingFor(principal, need) === null;
}

function within(limit: readonly string[] | null, address: string): boolean {
  return limit === null || limit.includes(address.toLowerCase());
}

/**
 * Whether a `collections` limit holds `address` on `chain`: its bare address (every chain), or
 * `<chain>:<address>`. Without a chain (a request that names none) an entry of any chain counts.
 */
export function holdsCollection(limit: readonly string[] | null, address: string, chain?: string): boolean {
  if (limit === null) return true;
  const bare = address.toLowerCase();
  if (limit.includes(bare)) return true;
  if (chain !== undefined) return limit.includes(`${chain}:${bare}`);
  return limit.some((entry) => entry.endsWith(`:${bare}`));
}

/** Whether the key holds the collection's address on some other chain than the one needed (its 403 names the chain). */
function onOtherChain(limit: readonly string[] | null, need: AccessNeed): boolean {
  const bare = need.collection?.toLowerCase();
  return need.chain !== undefined && !!limit?.some((entry) => entry.endsWith(`:${bare}`));
}

/**
 * The first entry of a webhook endpoint's `collections` filter that a key's `limit` does not hold,
 * given the endpoint's `chains` filter (null = every chain): `<chain>:<address>` is held by its
 * address or by itself; a bare address (every chain the filter leaves) by the address, or by
 * `<chain>:<address>` for each chain of the filter. The audit trail's filter (audit.ts) is the same rule.
 */
export function collectionFilterBeyond(
  limit: readonly string[] | null,
  collections: readonly string[] | null,
  chains: readonly string[] | null,
): string | undefined {
  if (limit === null || collections === null) return undefined;
  return collections.find((entry) => {
    const { chain, address } = collectionEntry(entry);
    if (limit.includes(address)) return false;
    if (chain !== undefined) return !limit.includes(entry);
    return chains === null || !chains.every((id) => limit.includes(`${id}:${address}`));
  });
}

/**
 * What a key may grant: nothing it does not hold itself. A limited key's grants must be limited
 * to (a part of) its own wallets and collections, and expire no later than it does.
 */
export function grantExceeds(
  granter: AccessPrincipal,
  grant: Pick<AccessPrincipal, "scopes" | "wallets" | "collections" | "chains" | "expiresAt">,
): string | null {
  for (const scope of grant.scopes) if (!granter.scopes.has(scope)) return `the scope ${scope}`;
  const subset = (own: readonly string[] | null, given: readonly string[] | null, what: string) => {
    if (own === null) return null;
    if (given === null) return `all ${what}s (this key is limited to some)`;
    // A collection on one chain is within the same address on every chain.
    const outside = given.find(
      (a) => !own.includes(a) && !(what === "collection" && own.includes(collectionEntry(a).address)),
    );
    return outside ? `the ${what} ${outside}` : null;
  };
  const beyond =
    subset(granter.wallets, grant.wallets, "wallet") ??
    subset(granter.collections, grant.collections, "collection") ??
    subset(granter.chains ?? null, grant.chains ?? null, "chain");
  if (beyond) return beyond;
  if (granter.expiresAt && (!grant.expiresAt || grant.expiresAt > granter.expiresAt))
    return `a life past this key's own expiry (${granter.expiresAt.toISOString()})`;
  return null;
}

/** A `collections` entry split: its chain (undefined = every chain) and its address (as given: lower case when stored). */
export { collectionEntry };
