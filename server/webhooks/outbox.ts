import type { SqlDriver, SqlExecutor } from "../db";
import { TEST_EVENT_TYPE } from "./events";

/** A delivery leased to this process for one attempt. */
export interface ClaimedDelivery {
  endpointId: string;
  eventSeq: string;
  eventId: string;
  type: string;
  data: Record<string, unknown>;
  eventCreatedAt: Date;
  collection: string | null;
  wallet: string | null;
  operationAccessKeyId: string | null;
  url: string;
  /** The endpoint's creating key (null = root): it must still read the event. */
  endpointAccessKeyId: string | null;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  attempts: number;
  createdAt: Date;
}

export type DeliveryStatus = "pending" | "delivered" | "failed";

/** What the delivery log shows of one event sent (or to be sent) to one endpoint. */
export interface DeliveryRecord {
  eventId: string;
  type: string;
  status: DeliveryStatus;
  inFlight: boolean;
  attempts: number;
  attemptLog: AttemptLogEntry[];
  lastStatus: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  cursor: string;
}

export interface AttemptLogEntry {
  at: string;
  status?: number;
  error?: string;
  ms: number;
}

/** One attempt's outcome, as the worker records it. */
export interface AttemptRecord {
  entry: AttemptLogEntry;
  /** 2xx: delivered. */
  delivered: boolean;
  /** Failed for good now (410, a key that no longer reads the event), whatever the retry window says. */
  final: boolean;
  /** When to try again if the window allows. */
  retryInMs: number;
  /** How long retries go on after the first attempt. */
  retryWindowMs: number;
}

const json = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);
const date = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

/**
 * Fan-out: up to $FANOUT events, oldest first, each to one delivery per endpoint that takes it
 * (its type; its collection and wallet filters; enabled and made before the event) and whose key
 * could read it (held, unexpired, with the read scope of the event's type, and the event's
 * collection and wallet within its limits, or the key made the operation itself); the root
 * key's endpoints (no key) read everything. The same rule as readableBy(), which each attempt
 * checks again. Events locked by another process's fan-out are skipped.
 */
const FAN_OUT = (limit: string) => `events AS (
         SELECT seq, type, collection, wallet, access_key_id, order_key, endpoint_id, created_at
         FROM webhook_events WHERE NOT fanned_out ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED
       ), deliveries AS (
         INSERT INTO webhook_deliveries (endpoint_id, event_seq, order_key, status)
         SELECT w.id, e.seq, w.id || ' ' || e.order_key, 'pending'
         FROM events e
         JOIN webhook_endpoints w ON CASE WHEN e.type = '${TEST_EVENT_TYPE}' THEN w.id = e.endpoint_id ELSE
              w.enabled AND w.created_at <= e.created_at AND w.events ? e.type
              AND (w.collections IS NULL OR (e.collection IS NOT NULL AND w.collections ? e.collection))
              AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet)) END
         LEFT JOIN access_keys k ON k.id = w.access_key_id
         WHERE e.type = '${TEST_EVENT_TYPE}' OR w.access_key_id IS NULL OR (
           k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
           AND k.scopes ? (CASE WHEN e.type = 'wallet.low_balance' THEN 'wallets:read' ELSE 'nft:read' END)
           AND (e.access_key_id = k.id OR (
             (k.collections IS NULL OR e.collection IS NULL OR k.collections ? e.collection)
             AND (k.wallets IS NULL OR e.wallet IS NULL OR k.wallets ? e.wallet))))
         ON CONFLICT DO NOTHING
       ), marked AS (
         UPDATE webhook_events SET fanned_out = true WHERE seq IN (SELECT seq FROM events) RETURNING 1
       )`;

/**
 * Claim: leases due deliveries to $1 for $2 ms: per endpoint at most its free slots ($3/$4, else
 * $5), so one endpoint's backlog never takes another's turn; at most $6 in all; never a delivery
 * while an earlier one with its order key waits (to be fanned out, or to be delivered).
 */
const CLAIM = `slots AS (
         SELECT * FROM unnest($3::text[], $4::int[]) AS s(endpoint_id, free)
       ), picked AS (
         SELECT ranked.endpoint_id, ranked.event_seq FROM (
           SELECT c.endpoint_id, c.event_seq, coalesce(s.free, $5) AS free,
                  row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at) AS rank
           FROM webhook_endpoints w
           -- Per endpoint, its first due deliveries (an index scan): one endpoint's backlog is never in another's way.
           CROSS JOIN LATERAL (
             -- Scalar subqueries, not joins: each is an index probe per candidate, and the scan
             -- stops at the first $5 due rows in next_attempt_at order, whatever the table's size.
             SELECT x.endpoint_id, x.event_seq, x.next_attempt_at
             FROM webhook_deliveries x
             WHERE x.endpoint_id = w.id AND x.status = 'pending' AND x.next_attempt_at <= now()
               AND (w.enabled OR (SELECT ev.type FROM webhook_events ev WHERE ev.seq = x.event_seq) = '${TEST_EVENT_TYPE}')
               AND (x.order_key IS NULL OR (
                 x.event_seq = (SELECT min(p.event_seq) FROM webhook_deliveries p
                                WHERE p.order_key = x.order_key AND p.status = 'pending')
                 AND NOT EXISTS (SELECT 1 FROM webhook_events u
                                 WHERE NOT u.fanned_out AND u.seq < x.event_seq
                                   AND u.order_key = (SELECT ev.order_key FROM webhook_events ev WHERE ev.seq = x.event_seq))))
             ORDER BY x.next_attempt_at
             LIMIT $5
             FOR UPDATE OF x SKIP LOCKED
           ) c
           LEFT JOIN slots s ON s.endpoint_id = w.id
         ) ranked
         WHERE ranked.rank <= ranked.free
         LIMIT $6
       ), claimed AS (
         SELECT picked.endpoint_id, picked.event_seq, e.id AS event_id, e.type, e.data,
           e.created_at AS event_created_at, e.collection, e.wallet, e.access_key_id AS operation_key_id, w.url,
           w.access_key_id AS endpoint_key_id, w.secret, w.previous_secret, w.previous_secret_until
         FROM picked
         JOIN webhook_events e ON e.seq = picked.event_seq
         JOIN webhook_endpoints w ON w.id = picked.endpoint_id
       ), leased AS (
       -- The rows are locked (FOR UPDATE above): one another process claimed meanwhile was
       -- rechecked then, and left out as not due any more.
       UPDATE webhook_deliveries d
       SET lease_owner = $1, next_attempt_at = now() + $2 * interval '1 millisecond'
       FROM claimed c
       WHERE d.endpoint_id = c.endpoint_id AND d.event_seq = c.event_seq
       RETURNING c.*, d.attempts, d.created_at
       )`;

/**
 * Record: the attempts finished under $1's leases, as arrays from $first on (see recordColumns):
 * each delivered, failed (final, or past its retry window), or due again after its retry delay.
 * A delivery whose lease was lost (another process took it over) is left alone.
 */
const RECORD = (first: number) => {
  const $ = (i: number) => `$${first + i}`;
  return `UPDATE webhook_deliveries d SET
         status = CASE WHEN a.delivered THEN 'delivered'
                       WHEN a.final OR now() >= coalesce(d.retry_until, now() + a.window_ms * interval '1 millisecond')
                         THEN 'failed'
                       ELSE 'pending' END,
         next_attempt_at = now() + a.retry_ms * interval '1 millisecond',
         retry_until = coalesce(d.retry_until, now() + a.window_ms * interval '1 millisecond'),
         attempts = d.attempts + 1,
         attempt_log = d.attempt_log || jsonb_build_array(a.entry),
         last_status = a.last_status,
         last_error = a.last_error,
         last_attempt_at = now(),
         delivered_at = CASE WHEN a.delivered THEN now() END,
         lease_owner = NULL
       FROM unnest(${$(0)}::text[], ${$(1)}::bigint[], ${$(2)}::boolean[], ${$(3)}::boolean[], ${$(4)}::bigint[],
                   ${$(5)}::bigint[], ${$(6)}::jsonb[], ${$(7)}::int[], ${$(8)}::text[])
         AS a(endpoint_id, event_seq, delivered, final, retry_ms, window_ms, entry, last_status, last_error)
       WHERE d.endpoint_id = a.endpoint_id AND d.event_seq = a.event_seq AND d.lease_owner = $1
         AND d.status = 'pending'`;
};

/** An attempt made and not recorded yet. */
export interface FinishedAttempt {
  delivery: Pick<ClaimedDelivery, "endpointId" | "eventSeq">;
  record: AttemptRecord;
}

/** RECORD's nine arrays, one element per attempt. */
function recordColumns(attempts: FinishedAttempt[]): unknown[] {
  const column = <T>(pick: (a: FinishedAttempt) => T) => attempts.map(pick);
  return [
    column((a) => a.delivery.endpointId),
    column((a) => a.delivery.eventSeq),
    column((a) => a.record.delivered),
    column((a) => a.record.final),
    column((a) => a.record.retryInMs),
    column((a) => a.record.retryWindowMs),
    column((a) => JSON.stringify(a.record.entry)),
    column((a) => a.record.entry.status ?? null),
    column((a) => a.record.entry.error ?? null),
  ];
}

/**
 * The outbox and its deliveries (tables webhook_events, webhook_deliveries). Fan-out turns each
 * event into one delivery per endpoint that takes it; deliveries are leased for an attempt by
 * pushing next_attempt_at past the attempt's end, so with several processes each attempt is
 * made by one of them, and one that dies leaves its deliveries due again when the lease runs out.
 */
export class OutboxStore {
  constructor(private readonly db: SqlDriver) {}

  get backend(): "pglite" | "postgres" {
    return this.db.backend;
  }

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  /**
   * Whether there is anything to do: events to fan out, and when the next delivery is due (leased
   * ones included, at their lease's end). One cheap query: what an idle worker asks on each poll.
   */
  async pulse(): Promise<{ unfanned: boolean; nextDueInMs: number | null }> {
    const { rows } = await this.db.query<{ unfanned: boolean; next_due_ms: string | number | null }>(
      `SELECT EXISTS (SELECT 1 FROM webhook_events WHERE NOT fanned_out) AS unfanned,
              (SELECT extract(epoch FROM min(next_attempt_at) - now()) * 1000
                 FROM webhook_deliveries WHERE status = 'pending') AS next_due_ms`,
    );
    const due = rows[0]?.next_due_ms;
    return {
      unfanned: Boolean(rows[0]?.unfanned),
      nextDueInMs: due === null || due === undefined ? null : Number(due),
    };
  }

  /** Fans out up to `limit` events (FAN_OUT); answers how many. */
  async fanOut(limit: number): Promise<number> {
    const { rows } = await this.db.query<{ fanned: string | number }>(
      `WITH ${FAN_OUT("$1")} SELECT count(*) AS fanned FROM marked`,
      [limit],
    );
    return Number(rows[0]?.fanned ?? 0);
  }

  /**
   * A worker's round in one statement: records the attempts finished since the last round
   * (RECORD), fans out new events (FAN_OUT) and leases due deliveries (CLAIM). Every part sees the
   * store as it was before the statement: what is fanned out or recorded now counts from the next
   * round on (a later event of an operation is claimed the round after the earlier one is recorded).
   */
  async round(options: {
    owner: string;
    leaseMs: number;
    perEndpoint: number;
    slots: Map<string, number>;
    limit: number;
    fanOutLimit: number;
    finished: FinishedAttempt[];
  }): Promise<{
    fanned: number;
    deliveries: ClaimedDelivery[];
    recorded: { endpointId: string; eventSeq: string; status: DeliveryStatus }[];
  }> {
    const { rows } = await this.db.query<{
      fanned: string | number;
      claimed: ClaimedRow[] | string;
      recorded: RecordedRow[] | string;
    }>(
      `WITH recorded AS (${RECORD(8)} RETURNING d.endpoint_id, d.event_seq, d.status), ${FAN_OUT("$7")}, ${CLAIM}
       SELECT (SELECT count(*) FROM marked) AS fanned,
              (SELECT coalesce(json_agg(l), '[]') FROM leased l) AS claimed,
              (SELECT coalesce(json_agg(r), '[]') FROM recorded r) AS recorded`,
      [
        options.owner,
        options.leaseMs,
        [...options.slots.keys()],
        [...options.slots.values()],
        options.perEndpoint,
        options.limit,
        options.fanOutLimit,
        ...recordColumns(options.finished),
      ],
    );
    return {
      fanned: Number(rows[0].fanned),
      deliveries: json(rows[0].claimed).map(toClaimed),
      recorded: json(rows[0].recorded).map(toRecorded),
    };
  }

  /** Records attempts made under `owner`'s leases (RECORD); answers the new status of each recorded. */
  async recordAttempts(
    db: SqlExecutor,
    owner: string,
    attempts: FinishedAttempt[],
  ): Promise<{ endpointId: string; eventSeq: string; status: DeliveryStatus }[]> {
    if (attempts.length === 0) return [];
    const { rows } = await db.query<RecordedRow>(`${RECORD(2)} RETURNING d.endpoint_id, d.event_seq, d.status`, [
      owner,
      ...recordColumns(attempts),
    ]);
    return rows.map(toRecorded);
  }

  /** Gives back `owner`'s leases (a clean shutdown cut their attempts): due again at once. */
  async releaseLeases(owner: string): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET lease_owner = NULL, next_attempt_at = now()
       WHERE lease_owner = $1 AND status = 'pending'`,
      [owner],
    );
  }

  /** Every lease at once: for PGlite, whose data directory one process alone can open. */
  async releaseAllLeases(): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET lease_owner = NULL, next_attempt_at = now()
       WHERE lease_owner IS NOT NULL AND status = 'pending'`,
    );
  }

  /** The delivery log of an endpoint, newest event first; `before` is the previous page's cursor. */
  async list(
    endpointId: string,
    options: { status?: DeliveryStatus; before?: string; limit: number },
  ): Promise<DeliveryRecord[]> {
    const { rows } = await this.db.query<DeliveryRow>(
      `${DELIVERY_SELECT}
       WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR d.status = $2::text)
         AND ($3::bigint IS NULL OR d.event_seq < $3::bigint)
       ORDER BY d.event_seq DESC LIMIT $4`,
      [endpointId, options.status ?? null, options.before ?? null, options.limit],
    );
    return rows.map(toDeliveryRecord);
  }

  async findDelivery(endpointId: string, eventId: string): Promise<DeliveryRecord | null> {
    const { rows } = await this.db.query<DeliveryRow>(`${DELIVERY_SELECT} WHERE d.endpoint_id = $1 AND e.id = $2`, [
      endpointId,
      eventId,
    ]);
    return rows[0] ? toDeliveryRecord(rows[0]) : null;
  }

  /**
   * A manual retry: the delivery is due now with a new retry window, whatever it came to before.
   * One in flight is left alone (it is being tried). False when there is no such delivery.
   */
  async retry(endpointId: string, eventId: string, retryWindowMs: number): Promise<boolean> {
    const { rowCount } = await this.db.query(
      `UPDATE webhook_deliveries d
       SET status = 'pending', next_attempt_at = now(), delivered_at = NULL,
           retry_until = now() + $3 * interval '1 millisecond'
       FROM webhook_events e
       WHERE e.seq = d.event_seq AND e.id = $2 AND d.endpoint_id = $1 AND d.lease_owner IS NULL`,
      [endpointId, eventId, retryWindowMs],
    );
    return rowCount > 0;
  }

  /** Writes a webhook.test event for one endpoint; returns its id. */
  async insertTestEvent(tx: SqlExecutor, id: string, endpointId: string, data: Record<string, unknown>) {
    await tx.query(
      `INSERT INTO webhook_events (id, type, data, endpoint_id, order_key) VALUES ($1, $2, $3, $4, NULL)`,
      [id, TEST_EVENT_TYPE, JSON.stringify(data), endpointId],
    );
  }

  /**
   * Forgets events older than `days` that wait for no delivery, with their delivery log (up to
   * `limit` at a time): the outbox and the log do not grow for ever. Answers how many went.
   */
  async prune(days: number, limit: number): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM webhook_events WHERE seq IN (
         SELECT e.seq FROM webhook_events e
         WHERE e.created_at < now() - $1 * interval '1 day' AND e.fanned_out
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_seq = e.seq AND d.status = 'pending')
         ORDER BY e.seq LIMIT $2)`,
      [days, limit],
    );
    return rowCount;
  }

  /** Age in seconds of the oldest event not delivered yet (0 when there is none): for /metrics. */
  async oldestUndeliveredSeconds(): Promise<number> {
    const { rows } = await this.db.query<{ age: string | number | null }>(
      `SELECT extract(epoch FROM now() - least(
         (SELECT min(created_at) FROM webhook_events WHERE NOT fanned_out),
         (SELECT min(e.created_at) FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq
           WHERE d.status = 'pending'))) AS age`,
    );
    const age = rows[0]?.age;
    return age === null || age === undefined ? 0 : Math.max(0, Number(age));
  }
}

interface DeliveryRow {
  event_id: string;
  type: string;
  event_seq: string | number;
  status: DeliveryStatus;
  lease_owner: string | null;
  attempts: number;
  attempt_log: AttemptLogEntry[] | string;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: Date | string | null;
  next_attempt_at: Date | string;
  delivered_at: Date | string | null;
  created_at: Date | string;
}

const DELIVERY_SELECT = `SELECT e.id AS event_id, e.type, d.event_seq, d.status, d.lease_owner, d.attempts, d.attempt_log,
  d.last_status, d.last_error, d.last_attempt_at, d.next_attempt_at, d.delivered_at, d.created_at
  FROM webhook_deliveries d JOIN webhook_events e ON e.seq = d.event_seq`;

function toDeliveryRecord(row: DeliveryRow): DeliveryRecord {
  const inFlight = row.lease_owner !== null && row.status === "pending";
  return {
    eventId: row.event_id,
    type: row.type,
    status: row.status,
    inFlight,
    attempts: row.attempts,
    attemptLog: json(row.attempt_log),
    lastStatus: row.last_status,
    lastError: row.last_error,
    lastAttemptAt: date(row.last_attempt_at),
    nextAttemptAt: row.status === "pending" && !inFlight ? date(row.next_attempt_at) : null,
    deliveredAt: date(row.delivered_at),
    createdAt: new Date(row.created_at),
    cursor: String(row.event_seq),
  };
}

interface ClaimedRow {
  endpoint_id: string;
  event_seq: string | number;
  event_id: string;
  type: string;
  data: Record<string, unknown> | string;
  event_created_at: Date | string;
  collection: string | null;
  wallet: string | null;
  operation_key_id: string | null;
  url: string;
  endpoint_key_id: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | string | null;
  attempts: number;
  created_at: Date | string;
}

function toClaimed(row: ClaimedRow): ClaimedDelivery {
  return {
    endpointId: row.endpoint_id,
    eventSeq: String(row.event_seq),
    eventId: row.event_id,
    type: row.type,
    data: json(row.data),
    eventCreatedAt: new Date(row.event_created_at),
    collection: row.collection,
    wallet: row.wallet,
    operationAccessKeyId: row.operation_key_id,
    url: row.url,
    endpointAccessKeyId: row.endpoint_key_id,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: date(row.previous_secret_until),
    attempts: row.attempts,
    createdAt: new Date(row.created_at),
  };
}

interface RecordedRow {
  endpoint_id: string;
  event_seq: string | number;
  status: DeliveryStatus;
}

function toRecorded(row: RecordedRow) {
  return { endpointId: row.endpoint_id, eventSeq: String(row.event_seq), status: row.status };
}
