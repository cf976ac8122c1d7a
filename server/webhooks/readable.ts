import { allows, type AccessPrincipal } from "../access";
import { readScopeOf, TEST_EVENT_TYPE } from "./events";

/** What fan-out and delivery know of an event to decide who may receive it. */
export interface EventSubject {
  type: string;
  /** Lower-case; null for an event about no collection (a deployment, a wallet's balance). */
  collection: string | null;
  wallet: string | null;
  /** The access key that made the operation reported, if any. */
  operationAccessKeyId: string | null;
}

/**
 * Whether the key `principal` could read the event: it holds the read scope of the event's type,
 * and the event's collection and wallet are within its limits, or (an operation event) the key
 * made the operation itself, as GET /nft/operations/{id} has it. A revoked key is no principal.
 * Fan-out applies the same rule in SQL (the trigger webhook_fan_out, migration 8); each attempt checks it again here, so
 * a key revoked after fan-out stops its endpoint's deliveries.
 */
export function readableBy(principal: AccessPrincipal | null, event: EventSubject): boolean {
  if (event.type === TEST_EVENT_TYPE) return true;
  if (!principal) return false;
  const scope = readScopeOf(event.type);
  if (!principal.scopes.has(scope)) return false;
  if (principal.keyId !== null && event.operationAccessKeyId === principal.keyId) return true;
  return allows(principal, {
    scope,
    collection: event.collection ?? undefined,
    wallet: event.wallet ?? undefined,
  });
}
