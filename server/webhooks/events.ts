import { randomUUID } from "node:crypto";
import type { SqlExecutor } from "../db";

/** The events an endpoint can subscribe to (API.md, "Webhooks"). */
export const EVENT_TYPES = [
  "operation.sent",
  "operation.replaced",
  "operation.confirmed",
  "operation.failed",
  "operation.reorged",
  "wallet.low_balance",
  "collection.transfer",
  "collection.metadata_updated",
  "job.completed",
  "job.failed",
  "approval.requested",
  "approval.decided",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Sent by POST /webhooks/{id}/test to that endpoint alone; nobody subscribes to it. */
export const TEST_EVENT_TYPE = "webhook.test";

export interface EmittedEvent {
  type: Exclude<EventType, `operation.${string}`>;
  /** The event's `data`, as the receiver gets it. */
  data: Record<string, unknown>;
  /** The collection it is about: endpoint filters and key limits apply to it. */
  collection?: string;
  /** The wallet it is about: endpoint filters and key limits apply to it. */
  wallet?: string;
  /** Events with the same key reach each endpoint in the order they were emitted: a token's transfers, say. */
  orderKey?: string;
}

/** A new event id: the `webhook-id` header, the same on every retry. */
export function newEventId(): string {
  return `evt_${randomUUID().replace(/-/g, "")}`;
}

/**
 * Writes an event to the outbox on `tx`, the transaction that makes the change it reports, so the
 * change and its event are committed together or not at all; the delivery worker sends it after
 * the commit. Nothing is written while no enabled endpoint takes `type`. Returns the event's id,
 * or null when nothing was written. Operation events are written by triggers instead
 * (server/db/functions/webhook_operation_events.sql).
 */
export async function emitEvent(tx: SqlExecutor, event: EmittedEvent): Promise<string | null> {
  const [id] = await emitEvents(tx, [event]);
  return id ?? null;
}

/** SQL: whether an enabled endpoint takes the event type `type` (an SQL expression): the one test of the writers here. */
const takenByAnEndpoint = (type: string) =>
  `EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND events ? ${type})`;

/**
 * Whether an enabled endpoint takes `type` now (the test emitEvents applies to each event): a
 * caller with many events to build (a range's transfers) asks first, and builds none when not.
 */
export async function eventWanted(tx: SqlExecutor, type: EmittedEvent["type"]): Promise<boolean> {
  const { rows } = await tx.query<{ wanted: boolean }>(`SELECT ${takenByAnEndpoint("$1")} AS wanted`, [type]);
  return rows[0].wanted;
}

/**
 * `emitEvent` for many events in one statement (a block's transfers, say): each is written only
 * while an enabled endpoint takes its type. Returns the ids written, in order.
 */
export async function emitEvents(tx: SqlExecutor, events: EmittedEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((event, n) => ({
    n,
    id: newEventId(),
    type: event.type,
    data: JSON.stringify(event.data),
    collection: event.collection?.toLowerCase() ?? null,
    wallet: event.wallet?.toLowerCase() ?? null,
    order_key: event.orderKey ?? null,
  }));
  const { rows: written } = await tx.query<{ id: string }>(
    `INSERT INTO webhook_events (id, type, data, collection, wallet, order_key)
     SELECT r.id, r.type, r.data::jsonb, r.collection, r.wallet, r.order_key
     FROM jsonb_to_recordset($1::jsonb) AS r(n integer, id text, type text, data text, collection text,
       wallet text, order_key text)
     WHERE ${takenByAnEndpoint("r.type")}
     ORDER BY r.n
     RETURNING id`,
    [JSON.stringify(rows)],
  );
  return written.map((row) => row.id);
}
