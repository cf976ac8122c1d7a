import { AccessKeyStore, principalOf, ROOT_PRINCIPAL, type AccessPrincipal, type AuditLog } from "../access";
import type { SqlExecutor } from "../db";
import type { Logger } from "../http/logger";
import { WebhookEndpointStore } from "./endpoint-store";
import type { WebhookMetrics } from "./metrics";
import type {
  AttemptLogEntry,
  AttemptRecord,
  ClaimedDelivery,
  CursorDelivery,
  CursorRecord,
  DeliveryStatus,
  OutboxStore,
  RecordedDelivery,
} from "./outbox";
import { attemptRecord, DeliveryCursor } from "./cursor";
import { readableBy } from "./readable";
import { renderEventBody } from "./render";
import { DEFAULT_RETRY, retryDelayMs, type RetryPolicy } from "./retry";
import type { AttemptResult, DeliverySender } from "./sender";
import { stillSigning } from "./signing";

export interface WebhookWorkerOptions {
  retry: RetryPolicy;
  /** Attempts in flight to one endpoint from this process: a slow endpoint holds at most these. */
  perEndpointConcurrency: number;
  /**
   * Deliveries claimed for an endpoint beyond those in flight, each sent as soon as one in flight
   * ends (no round in between): a fast endpoint is never idle while the worker waits for its next
   * round. Their wait and their own attempt fit in a lease: queued / concurrency waves of timeouts.
   */
  perEndpointQueued: number;
  /**
   * Deliveries claimed by this process (in flight and queued), all endpoints together: a bound on
   * memory, far above what endpoints that stop answering hold (see `unanswered`), so that they
   * never use it up for the others.
   */
  maxInFlight: number;
  /** How often an idle worker asks the store whether there is work (one cheap query). */
  idlePollMs: number;
  /** The shortest pause between two rounds while there is work. */
  busyPollMs: number;
  /** How long a claimed delivery is this process's: past the delivery timeout, with a margin. */
  leaseMs: number;
  /** Vacuum the deliveries after this many attempts recorded (PGlite, which has no autovacuum); 0: never. */
  vacuumEvery: number;
  /**
   * Read new events past the cursor and send them from memory, queueing only what that cannot
   * finish (migration 9): PGlite alone, whose one connection commits events in seq order.
   */
  cursor: boolean;
}

export const DEFAULT_WORKER_OPTIONS: WebhookWorkerOptions = {
  retry: DEFAULT_RETRY,
  perEndpointConcurrency: 32,
  perEndpointQueued: 32,
  maxInFlight: 4096,
  idlePollMs: 100,
  busyPollMs: 2,
  leaseMs: 30_000,
  vacuumEvery: 0,
  cursor: false,
};

/** Events (and their delivery log) are kept this long once nothing waits for them. */
export const RETENTION_DAYS = 30;
/** How often old events are pruned, and how many at most each time. */
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 10_000;

/**
 * With the cursor, how long a round may go without claiming from the queue, whose rows there are
 * the few the cursor could not finish: retries come due at their time, within this.
 */
const QUEUE_CHECK_MS = 250;

/**
 * Deliveries claimed, or events read past the cursor, in one round at most: one statement's work,
 * which on PGlite holds the service's thread (a backlog is taken over several rounds).
 */
const ROUND_MAX = 512;

/** How long an endpoint that stopped answering is remembered with no attempt made to it (deleted, say). */
const UNANSWERED_FORGET_MS = 3_600_000;

/** How long a key's principal is trusted between two reads: a revocation stops deliveries within it. */
const PRINCIPAL_CACHE_MS = 1_000;

/** The actor of audit events the worker writes (410 Gone disables an endpoint). */
const WORKER_ACTOR = { keyId: null, keyName: "webhook delivery", clientAddress: "-" };

export interface WebhookWorkerDeps {
  outbox: OutboxStore;
  db: SqlExecutor;
  sender: DeliverySender;
  audit: AuditLog;
  logger: Logger;
  metrics?: WebhookMetrics;
  /** This process's name on leases. */
  owner: string;
  options: WebhookWorkerOptions;
}

interface Finished {
  delivery: ClaimedDelivery;
  record: AttemptRecord;
}

/**
 * Sends the outbox's deliveries (written with their events, one per endpoint that takes each).
 * Each round leases due deliveries, per endpoint at most `perEndpointConcurrency` in flight and
 * `perEndpointQueued` more, sent as slots free, and POSTs each on its own: a slow or dead
 * endpoint holds its own slots, never another's. A delivery
 * waits while an earlier one with its order key (the events of one operation) is not delivered.
 * Attempts finished between two rounds are recorded by the next, in one statement.
 */
export class WebhookWorker {
  private running = false;
  private stopping = false;
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private woken = false;
  private busy = false;
  /** Deliveries claimed and not finished (in flight or queued), all endpoints, and per endpoint. */
  private claimed = 0;
  private readonly perEndpoint = new Map<string, number>();
  /** Attempts in flight per endpoint, and the claimed deliveries waiting for one of them to end. */
  private readonly sending = new Map<string, number>();
  /**
   * Endpoints whose last attempt got no answer (a timeout, a connection refused or cut): each is
   * given one delivery at a time until one is answered, so that one that stopped answering holds
   * one of the process's slots (maxInFlight), not its 64, once those it had claimed then are done.
   * (Those are still sent as many at a time as before: one at a time, the last of them would wait
   * past its lease.)
   */
  private readonly unanswered = new Map<string, number>();
  private readonly queued = new Map<string, ClaimedDelivery[]>();
  private readonly attempts = new Set<Promise<void>>();
  private finished: Finished[] = [];
  private readonly principals = new Map<string, { principal: AccessPrincipal | null; at: number }>();
  private readonly keys: AccessKeyStore;
  private prunedAt = 0;
  private recordedSinceVacuum = 0;
  /** PGlite's deliveries past the cursor (options.cursor), once the round has read where it stands. */
  private cursor?: DeliveryCursor;
  /** With the cursor: the queue may have deliveries due now (else it is claimed from at queueCheckAt). */
  private queueDirty = true;
  private queueCheckAt = 0;

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.keys = new AccessKeyStore(deps.db);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Looks at the store now instead of at the next poll (a test event or a retry was just written). */
  wake(): void {
    this.woken = true;
    this.queueDirty = true;
    this.wakeUp?.();
  }

  /**
   * Stops: no new rounds, attempts in flight cut (not counted as attempts) and their deliveries
   * given back, due at once for whichever process runs next; finished ones recorded first.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.stopping = true;
    this.wake();
    await this.loop;
    this.deps.sender.close();
    await Promise.allSettled([...this.attempts]);
    await this.flush();
    await this.deps.outbox.releaseLeases(this.deps.owner).catch(() => undefined);
    // What it held in memory is past the cursor in the store: a worker started again reads it there.
    this.cursor = undefined;
    this.running = false;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let waitMs: number;
      try {
        waitMs = await this.round();
      } catch (err) {
        this.deps.logger.warn({ err: describe(err) }, "webhook round failed; trying again");
        waitMs = 1_000;
      }
      await this.pause(waitMs);
    }
  }

  /** One round; answers how long to wait before the next. */
  private async round(): Promise<number> {
    const { options, outbox } = this.deps;
    const started = performance.now();
    if (options.cursor && !this.cursor) this.cursor = new DeliveryCursor(await outbox.cursorStart());
    // After a round that found work, look again soon; an idle worker first asks (one query).
    const nextDue = this.busy ? 0 : await outbox.nextDueInMs(this.cursor?.after);
    const due = nextDue !== null && nextDue <= 0;
    if (due && !this.busy) this.queueDirty = true;
    // `busy` stays as it was while the round runs: attempts finishing meanwhile wait for the next
    // round (they would wake an idle worker at once).
    let busy = false;
    if (due || this.finished.length > 0 || this.cursor?.hasWrites) {
      const finished = this.finished;
      this.finished = [];
      const limit = this.stopping ? 0 : Math.min(ROUND_MAX, Math.max(0, options.maxInFlight - this.claimed));
      const claim = !this.cursor || this.queueDirty || Date.now() >= this.queueCheckAt;
      const cursor = this.cursor?.next(limit);
      let round;
      try {
        round = await outbox.round({
          owner: this.deps.owner,
          leaseMs: options.leaseMs,
          perEndpoint: options.perEndpointConcurrency + options.perEndpointQueued,
          slots: this.freeSlots(),
          limit: claim ? limit : 0,
          finished,
          cursor,
        });
      } catch (err) {
        // Nothing of it was written: the next round writes it.
        this.finished = finished.concat(this.finished);
        if (cursor) this.cursor?.failed(cursor);
        throw err;
      }
      this.countRecorded(finished, round.recorded);
      for (const delivery of round.deliveries) this.attempt(delivery);
      if (cursor && this.cursor) {
        if (claim) {
          this.queueDirty = round.deliveries.length > 0;
          this.queueCheckAt = Date.now() + QUEUE_CHECK_MS;
        }
        // Deliveries it queued due now (behind an order key, past the memory): claimed next round.
        if (cursor.records.some((r) => r.entry === null)) this.queueDirty = true;
        this.cursor.written(cursor, round.last);
        this.countCursor(cursor.records);
        const full = (endpointId: string) => (this.perEndpoint.get(endpointId) ?? 0) >= this.capacityOf(endpointId);
        this.cursor.take(round.read, full, (delivery) => this.attempt(delivery));
      }
      const written = finished.length + (cursor?.records.length ?? 0);
      busy = round.deliveries.length > 0 || written > 0 || round.last !== null;
      this.recordedSinceVacuum += written;
      if (options.vacuumEvery > 0 && this.recordedSinceVacuum >= options.vacuumEvery) {
        this.recordedSinceVacuum = 0;
        await outbox.vacuum();
      }
    }
    this.busy = busy;
    // At least as long as the round took: the store serves writes between rounds too (a round that
    // waited behind writes counts, and then waits longer).
    if (busy) return Math.max(options.busyPollMs, performance.now() - started);
    if (Date.now() - this.prunedAt > PRUNE_EVERY_MS) {
      this.prunedAt = Date.now();
      await outbox.prune(RETENTION_DAYS, PRUNE_BATCH);
    }
    return nextDue !== null && nextDue > 0 ? Math.min(options.idlePollMs, nextDue) : options.idlePollMs;
  }

  /** Deliveries an endpoint may have claimed here, in flight and queued. */
  private capacityOf(endpointId: string): number {
    const { perEndpointConcurrency, perEndpointQueued } = this.deps.options;
    return this.unanswered.has(endpointId) ? 1 : perEndpointConcurrency + perEndpointQueued;
  }

  /** Endpoints with deliveries claimed here (or that stopped answering), and how many more each may take. */
  private freeSlots(): Map<string, number> {
    const slots = new Map<string, number>();
    for (const [endpointId, at] of this.unanswered) {
      if (Date.now() - at > UNANSWERED_FORGET_MS) this.unanswered.delete(endpointId);
      else slots.set(endpointId, this.capacityOf(endpointId));
    }
    for (const [endpointId, count] of this.perEndpoint)
      slots.set(endpointId, Math.max(0, this.capacityOf(endpointId) - count));
    return slots;
  }

  private pause(ms: number): Promise<void> {
    if (this.woken || this.stopping) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        this.woken = false;
        done();
      };
    });
  }

  /** A claimed delivery: sent now if its endpoint has a free slot, else when one frees. */
  private attempt(delivery: ClaimedDelivery): void {
    this.claimed++;
    this.perEndpoint.set(delivery.endpointId, (this.perEndpoint.get(delivery.endpointId) ?? 0) + 1);
    if ((this.sending.get(delivery.endpointId) ?? 0) < this.deps.options.perEndpointConcurrency) this.send(delivery);
    else if (this.queued.has(delivery.endpointId)) this.queued.get(delivery.endpointId)!.push(delivery);
    else this.queued.set(delivery.endpointId, [delivery]);
  }

  private send(delivery: ClaimedDelivery): void {
    const { endpointId } = delivery;
    this.sending.set(endpointId, (this.sending.get(endpointId) ?? 0) + 1);
    const done = this.deliver(delivery)
      .catch((err: unknown) => {
        this.deps.logger.warn(
          { err: describe(err), webhookId: endpointId, eventId: delivery.eventId },
          "a webhook attempt failed before its outcome; it is tried again",
        );
        // One read past the cursor goes to the queue (due now); a claimed one's lease runs out.
        if (delivery.viaCursor) this.cursor?.dropped(delivery as CursorDelivery);
      })
      .finally(() => {
        this.claimed--;
        decrement(this.perEndpoint, endpointId);
        decrement(this.sending, endpointId);
        this.attempts.delete(done);
        // The next one queued for this endpoint takes the slot (on stop they stay: their leases are given back).
        const waiting = this.queued.get(endpointId);
        const next = waiting?.shift();
        if (waiting?.length === 0) this.queued.delete(endpointId);
        if (next && !this.stopping) this.send(next);
      });
    this.attempts.add(done);
  }

  /** One attempt: the key's check, the POST, then the outcome queued for the next batch record. */
  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { options } = this.deps;
    const readable = readableBy(await this.principalOf(delivery.endpointAccessKeyId), {
      type: delivery.type,
      collection: delivery.collection,
      wallet: delivery.wallet,
      operationAccessKeyId: delivery.operationAccessKeyId,
    });
    let entry: AttemptLogEntry;
    let delivered = false;
    let gone = false;
    if (!readable) {
      entry = {
        at: new Date().toISOString(),
        ms: 0,
        error: "the endpoint's access key was revoked or no longer reads this event",
      };
    } else {
      const at = new Date().toISOString();
      const body = renderEventBody({ type: delivery.type, data: delivery.data, createdAt: delivery.eventCreatedAt });
      const { endpointId, url, eventId } = delivery;
      const result = await this.deps.sender.post(endpointId, url, eventId, this.secrets(delivery), body);
      if (this.stopping && result.kind === "error") return; // cut by the shutdown: stop() gives the lease back
      if (result.kind === "error") this.unanswered.set(endpointId, Date.now());
      else this.unanswered.delete(endpointId);
      entry = { at, ms: result.ms, ...answerOf(result) };
      delivered = result.kind === "answered" && result.status >= 200 && result.status < 300;
      gone = result.kind === "answered" && result.status === 410;
    }
    const record: AttemptRecord = {
      entry,
      delivered,
      final: gone || !readable,
      retryInMs: retryDelayMs(options.retry, delivery.attempts + 1),
      retryWindowMs: options.retry.windowMs,
    };
    if (delivery.viaCursor) {
      // Recorded by the next round; a 410 with the endpoint's disabling, now (the next of its order key then waits).
      const read = delivery as CursorDelivery;
      const written = gone && (await this.recordGoneCursor(read, record));
      const next = this.cursor?.attempted(read, record, gone, written);
      if (next) this.attempt(next);
    } else if (gone) {
      this.count(delivery, await this.recordGone(delivery, record));
      return;
    } else this.finished.push({ delivery, record });
    // Recorded by the next round (within busyPollMs) with every other attempt finished by then.
    if (!this.busy) this.wake();
  }

  /** Records the attempts finished and not recorded yet (on stop; rounds record them otherwise). */
  private async flush(): Promise<void> {
    const cursor = this.cursor?.final() ?? undefined;
    if (this.finished.length === 0 && !cursor) return;
    const finished = this.finished;
    this.finished = [];
    try {
      const { outbox, db, owner } = this.deps;
      this.countRecorded(finished, await outbox.recordAttempts(db, owner, finished, cursor));
      if (cursor) this.countCursor(cursor.records);
    } catch (err) {
      // Their leases run out and they are tried again: at least once, never lost.
      this.deps.logger.warn({ err: describe(err), attempts: finished.length }, "recording webhook attempts failed");
    }
  }

  private countRecorded(finished: Finished[], recorded: RecordedDelivery[]) {
    if (!this.deps.metrics) return;
    const byKey = new Map(finished.map((f) => [`${f.delivery.endpointId}:${f.delivery.eventSeq}`, f.delivery]));
    for (const { endpointId, eventSeq, status } of recorded) {
      const delivery = byKey.get(`${endpointId}:${eventSeq}`);
      if (delivery) this.count(delivery, status);
    }
  }

  private count(delivery: Pick<ClaimedDelivery, "type">, status: DeliveryStatus | null): void {
    if (status) this.deps.metrics?.delivery(delivery.type, status === "pending" ? "retrying" : status);
  }

  /** The attempts among the cursor's records (the others only moved to the queue). */
  private countCursor(records: CursorRecord[]): void {
    for (const r of records) {
      if (r.entry) this.count(r, r.delivered ? "delivered" : r.final ? "failed" : "pending");
    }
  }

  /** Signed with the current secret, and each rotated out while it still signs (24 h after its rotation). */
  private secrets(delivery: ClaimedDelivery): string[] {
    if (delivery.previousSecrets === null) return [delivery.secret];
    return [delivery.secret, ...stillSigning(delivery.previousSecrets).map((p) => p.secret)];
  }

  /** 410 Gone: the delivery fails and the endpoint is disabled, with its audit event, together. */
  private async recordGone(delivery: ClaimedDelivery, record: AttemptRecord): Promise<DeliveryStatus | null> {
    const { outbox } = this.deps;
    return outbox.transaction(async (tx) => {
      const [recorded] = await outbox.recordAttempts(tx, this.deps.owner, [{ delivery, record }]);
      await this.disableGone(tx, delivery);
      return recorded?.status ?? null;
    });
  }

  /** recordGone for a delivery read past the cursor; false when the store failed it (the next round records it). */
  private async recordGoneCursor(delivery: CursorDelivery, record: AttemptRecord): Promise<boolean> {
    const { outbox } = this.deps;
    const records = [attemptRecord(delivery, record)];
    try {
      await outbox.transaction(async (tx) => {
        await outbox.recordAttempts(tx, this.deps.owner, [], { records });
        await this.disableGone(tx, delivery);
      });
    } catch (err) {
      this.deps.logger.warn({ err: describe(err), webhookId: delivery.endpointId }, "recording a 410 failed");
      return false;
    }
    this.countCursor(records);
    return true;
  }

  /** Disables the endpoint that answered 410, with its audit event (once, if it still was enabled). */
  private async disableGone(tx: SqlExecutor, delivery: ClaimedDelivery): Promise<void> {
    if (await new WebhookEndpointStore(tx).disableGone(tx, delivery.endpointId)) {
      await this.deps.audit.record(tx, WORKER_ACTOR, {
        action: "webhook.disabled",
        targetType: "webhook",
        targetId: delivery.endpointId,
        details: { reason: "the receiver answered 410 Gone", eventId: delivery.eventId },
      });
    }
    this.deps.logger.warn({ webhookId: delivery.endpointId }, "webhook endpoint answered 410 Gone: disabled");
  }

  /** The principal of an endpoint's key: root for null, null once revoked or expired. */
  private async principalOf(keyId: string | null): Promise<AccessPrincipal | null> {
    if (keyId === null) return ROOT_PRINCIPAL;
    const cached = this.principals.get(keyId);
    if (cached && Date.now() - cached.at < PRINCIPAL_CACHE_MS) return cached.principal;
    const key = await this.keys.find(keyId);
    const principal = key && !(key.expiresAt && key.expiresAt.getTime() <= Date.now()) ? principalOf(key) : null;
    this.principals.set(keyId, { principal, at: Date.now() });
    return principal;
  }
}

/** The log entry's outcome: the HTTP status (and why a non-2xx failed), or the error. */
function answerOf(result: AttemptResult): Pick<AttemptLogEntry, "status" | "error"> {
  if (result.kind === "error") return { error: result.error };
  if (result.status >= 200 && result.status < 300) return { status: result.status };
  const redirect = result.status >= 300 && result.status < 400;
  return { status: result.status, error: redirect ? "redirect not followed" : "non-2xx answer" };
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

function describe(err: unknown): { name?: string; message?: string } {
  return err instanceof Error ? { name: err.name, message: err.message.slice(0, 300) } : {};
}
