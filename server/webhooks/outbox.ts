import type { SqlDriver, SqlExecutor } from "../db";
import { TEST_EVENT_TYPE } from "./events";
import type { PreviousSecret } from "./signing";

/** A delivery leased to this process for one attempt. */
export interface ClaimedDelivery {
  endpointId: string;
  eventSeq: number;
  eventId: string;
  type: string;
  data: Record<string, unknown>;
  eventCreatedAt: string;
  url: string;
  secret: string;
  /** The secrets rotated out, each signing until its time (migration 12). */
  previousSecrets: PreviousSecret[] | null;
  attempts: number;
  /** Whether its endpoint takes the event now (webhook_takes): else the attempt fails for good, unsent. */
  taken: boolean;
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
  retryMs: number;
  /** How long retries go on after the first attempt. */
  windowMs: number;
}

/** An attempt made and not recorded yet. */
export interface FinishedAttempt {
  delivery: Pick<ClaimedDelivery, "endpointId" | "eventSeq" | "type">;
  record: AttemptRecord;
}

/** What a claim leases: to whom, for how long, how many per endpoint and in all. */
export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  /** Deliveries an endpoint with nothing claimed here may take. */
  perEndpoint: number;
  /** Endpoints with deliveries claimed here, and how many more each may take. */
  slots: Map<string, number>;
  limit: number;
}

/**
 * The outbox and its deliveries (tables webhook_events, webhook_deliveries, webhook_delivery_log):
 * fanned out by the statement that writes an event (webhook_fan_out.sql), leased by a claim
 * (webhook_claim.sql), so that with several processes each attempt is made by one of them.
 */
export class OutboxStore {
  constructor(private readonly db: SqlDriver) {}

  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(fn);
  }

  /** When the next delivery is due, in ms from now (leased ones at their lease's end; null when none is pending). */
  async nextDueInMs(): Promise<number | null> {
    const { rows } = await this.db.query<{ due: number | null }>(`SELECT webhook_next_due_ms() AS due`);
    return rows[0].due;
  }

  /** Leases due deliveries (server/db/functions/webhook_claim.sql). */
  async claim({ owner, leaseMs, slots, perEndpoint, limit }: ClaimOptions): Promise<ClaimedDelivery[]> {
    const { rows } = await this.db.query<{ claimed: ClaimedDelivery[] }>(
      `SELECT webhook_claim($1, $2, $3::jsonb, $4, $5) AS claimed`,
      [owner, leaseMs, JSON.stringify(Object.fromEntries(slots)), perEndpoint, limit],
    );
    return rows[0].claimed;
  }

  /** Records attempts made under `owner`'s leases (webhook_record.sql); answers the new status of each. */
  async record(owner: string, attempts: FinishedAttempt[], db: SqlExecutor = this.db): Promise<RecordedDelivery[]> {
    if (attempts.length === 0) return [];
    const rows = attempts.map(({ delivery: { endpointId, eventSeq }, record }) => ({
      endpointId,
      eventSeq,
      ...record,
    }));
    const { rows: out } = await db.query<{ recorded: RecordedDelivery[] }>(
      `SELECT webhook_record($1, $2::jsonb) AS recorded`,
      [owner, JSON.stringify(rows)],
    );
    return out[0].recorded;
  }

  /**
   * Gives back `owner`'s leases (a clean shutdown cut their attempts), or every lease (PGlite, whose
   * data directory one process alone opens): due again at once.
   */
  async releaseLeases(owner?: string): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET lease_owner = NULL, next_attempt_at = now()
       WHERE lease_owner = coalesce($1, lease_owner) AND status = 'pending'`,
      [owner ?? null],
    );
  }

  /**
   * The delivery log of an endpoint, newest event first (`before`: the previous page's cursor), or
   * the delivery of one event. A leased pending delivery is in flight, with no next try yet.
   */
  async list(
    endpointId: string,
    options: { status?: DeliveryStatus; before?: string; eventId?: string; limit: number },
  ): Promise<DeliveryRecord[]> {
    const { rows } = await this.db.query<DeliveryRecord>(
      `SELECT e.id AS "eventId", e.type, d.status,
         d.lease_owner IS NOT NULL AND d.status = 'pending' AS "inFlight", d.attempts, d.attempt_log AS "attemptLog",
         d.last_status AS "lastStatus", d.last_error AS "lastError", d.last_attempt_at AS "lastAttemptAt",
         CASE WHEN d.status = 'pending' AND d.lease_owner IS NULL THEN d.next_attempt_at END AS "nextAttemptAt",
         d.delivered_at AS "deliveredAt", d.created_at AS "createdAt", d.event_seq::text AS cursor
       FROM webhook_delivery_records d JOIN webhook_events e ON e.seq = d.event_seq
       WHERE d.endpoint_id = $1 AND ($2::text IS NULL OR d.status = $2::text)
         AND ($3::bigint IS NULL OR d.event_seq < $3::bigint) AND ($4::text IS NULL OR e.id = $4)
       ORDER BY d.event_seq DESC LIMIT $5`,
      [endpointId, options.status ?? null, options.before ?? null, options.eventId ?? null, options.limit],
    );
    return rows;
  }

  /**
   * A manual retry: the delivery is due now with a new retry window, whatever it came to before
   * (one that ended moves back from the log). One in flight is left alone (it is being tried).
   */
  async retry(endpointId: string, eventId: string, retryWindowMs: number): Promise<void> {
    await this.db.query(
      `WITH event AS (SELECT seq, order_key FROM webhook_events WHERE id = $2),
       pending AS (
         UPDATE webhook_deliveries d SET next_attempt_at = now(), retry_until = now() + $3 * interval '1 millisecond'
         FROM event WHERE d.endpoint_id = $1 AND d.event_seq = event.seq AND d.lease_owner IS NULL
       ), ended AS (
         DELETE FROM webhook_delivery_log l USING event WHERE l.endpoint_id = $1 AND l.event_seq = event.seq
         RETURNING l.*, event.order_key
       )
       INSERT INTO webhook_deliveries (endpoint_id, event_seq, order_key, status, attempts, attempt_log,
         last_status, last_error, last_attempt_at, next_attempt_at, retry_until, created_at)
       SELECT endpoint_id, event_seq, endpoint_id || ' ' || order_key, 'pending', attempts, attempt_log,
         last_status, last_error, last_attempt_at, now(), now() + $3 * interval '1 millisecond', created_at
       FROM ended`,
      [endpointId, eventId, retryWindowMs],
    );
  }

  /** Writes a webhook.test event `id` for one endpoint. */
  async insertTestEvent(id: string, endpointId: string, data: Record<string, unknown>): Promise<void> {
    await this.db.query(
      `INSERT INTO webhook_events (id, type, data, endpoint_id, order_key) VALUES ($1, $2, $3, $4, NULL)`,
      [id, TEST_EVENT_TYPE, JSON.stringify(data), endpointId],
    );
  }

  /**
   * Forgets events older than `days` that wait for no delivery, with their delivery log (up to
   * `limit` at a time): the outbox and the log do not grow for ever. Answers how many went. A
   * delivery to an endpoint deleted meanwhile waits for nothing.
   */
  async prune(days: number, limit: number): Promise<number> {
    const { rows } = await this.db.query<{ pruned: string | number }>(
      `WITH gone AS (
         DELETE FROM webhook_events WHERE seq IN (
           SELECT e.seq FROM webhook_events e
           WHERE e.created_at < now() - $1 * interval '1 day'
             AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
                             WHERE d.event_seq = e.seq)
           ORDER BY e.seq LIMIT $2)
         RETURNING seq
       ), log AS (DELETE FROM webhook_delivery_log l USING gone WHERE l.event_seq = gone.seq),
       orphans AS (DELETE FROM webhook_deliveries d USING gone WHERE d.event_seq = gone.seq)
       SELECT count(*) AS pruned FROM gone`,
      [days, limit],
    );
    return Number(rows[0].pruned);
  }

  /**
   * Reclaims the pending deliveries' rows that claims and records left behind: PGlite has no
   * autovacuum, and a claim's index scan slows with every dead row it walks past. The table holds
   * the pending deliveries alone (ended ones are in the log), so this stays cheap.
   */
  async vacuum(): Promise<void> {
    await this.db.exec("VACUUM webhook_deliveries");
  }

  /**
   * Age in seconds of the oldest event not delivered yet to an enabled endpoint (0 when there is
   * none): for /metrics. A disabled endpoint's deliveries wait until it is enabled again; counted,
   * one 410 would hold the figure growing until then, an alarm nobody can clear but by enabling it.
   */
  async oldestUndeliveredSeconds(): Promise<number> {
    const { rows } = await this.db.query<{ age: string | number | null }>(
      `SELECT extract(epoch FROM now() - min(e.created_at)) AS age
       FROM webhook_delivery_records d
       JOIN webhook_events e ON e.seq = d.event_seq
       JOIN webhook_endpoints w ON w.id = d.endpoint_id
       WHERE d.status = 'pending' AND w.enabled`,
    );
    return Math.max(0, Number(rows[0].age ?? 0));
  }
}

/** A delivery's status once an attempt at it is recorded. */
export type RecordedDelivery = Pick<ClaimedDelivery, "endpointId" | "eventSeq"> & { status: DeliveryStatus };
