import { attemptDelivery } from "./attempt";
import type { ClaimedDelivery } from "./outbox";
import { OutcomeRecorder, type OutcomeRecorderDeps } from "./recorder";
import type { SecretSeal } from "./secret-seal";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry";
import type { DeliverySender } from "./sender";

export interface WebhookWorkerOptions {
  retry: RetryPolicy;
  /** Attempts in flight to one endpoint from this process: a slow endpoint holds at most these. */
  perEndpointConcurrency: number;
  /**
   * Deliveries claimed for an endpoint beyond those in flight, each sent as soon as one in flight
   * ends (no round in between). Their wait and their own attempt fit in a lease.
   */
  perEndpointQueued: number;
  /** Deliveries claimed by this process (in flight and queued), all endpoints together: a bound on memory. */
  maxInFlight: number;
  /** How often an idle worker asks the store whether there is work (one cheap query). */
  idlePollMs: number;
  /** The shortest pause between two rounds while there is work. */
  busyPollMs: number;
  /** How long a claimed delivery is this process's: past the delivery timeout, with a margin. */
  leaseMs: number;
  /** Vacuum the deliveries after this many attempts recorded (PGlite, which has no autovacuum); 0: never. */
  vacuumEvery: number;
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
};

/** Events (and their delivery log) are kept this long once nothing waits for them. */
const RETENTION_DAYS = 30;
/** How often old events are pruned, and how many at most each time. */
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 10_000;
/** Deliveries claimed in one round at most: one statement's work (on PGlite, the service's thread). */
const ROUND_MAX = 512;
/** How long an endpoint that stopped answering is remembered with no attempt made to it (deleted, say). */
const UNANSWERED_FORGET_MS = 3_600_000;

export interface WebhookWorkerDeps extends OutcomeRecorderDeps {
  sender: DeliverySender;
  /** Opens the endpoints' sealed secrets. */
  seal: SecretSeal;
  options: WebhookWorkerOptions;
}

/**
 * Sends the outbox's deliveries. Each round records the attempts finished since the last one
 * (OutcomeRecorder), then claims due deliveries (OutboxStore.claim), each attempted on its own
 * (attemptDelivery) in its endpoint's slots: a slow or dead endpoint holds its own, never another's.
 */
export class WebhookWorker {
  private stopping = false;
  /** The rounds' loop, while the worker runs. */
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private woken = false;
  private busy = false;
  /** Deliveries claimed and not finished (in flight or queued), all endpoints. */
  private claimed = 0;
  /** Attempts in flight per endpoint, and the claimed deliveries waiting for one of them to end. */
  private readonly sending = new Map<string, number>();
  private readonly queued = new Map<string, ClaimedDelivery[]>();
  /**
   * Endpoints whose last attempt got no answer (a timeout, a connection refused or cut): each
   * may have one delivery claimed at a time until one is answered, so that one that stopped
   * answering holds one of the process's slots, not its 64.
   */
  private readonly unanswered = new Map<string, number>();
  private readonly attempts = new Set<Promise<void>>();
  private readonly recorder: OutcomeRecorder;
  private prunedAt = 0;
  private recordedSinceVacuum = 0;

  constructor(private readonly deps: WebhookWorkerDeps) {
    this.recorder = new OutcomeRecorder(deps);
  }

  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Looks at the store now instead of at the next poll (a test event or a retry was just written). */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /**
   * Stops: no new rounds, attempts in flight cut (not counted as attempts) and their deliveries
   * given back, due at once for whichever process runs next; finished ones recorded first.
   */
  async stop(): Promise<void> {
    if (!this.loop) return;
    this.stopping = true;
    this.wake();
    await this.loop;
    this.deps.sender.close();
    await Promise.allSettled([...this.attempts]);
    await this.recorder.flush().catch((err: unknown) => this.warn(err, "recording webhook attempts failed"));
    await this.deps.outbox.releaseLeases(this.deps.owner).catch(() => undefined);
    this.loop = undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let waitMs: number;
      try {
        waitMs = await this.round();
      } catch (err) {
        this.warn(err, "webhook round failed; trying again");
        waitMs = 1_000;
      }
      await this.pause(waitMs);
    }
  }

  /** One round: record what finished, claim what is due; answers how long to wait before the next. */
  private async round(): Promise<number> {
    const { options, outbox } = this.deps;
    const started = performance.now();
    const recorded = await this.recorder.flush();
    // After a round that found work, look again soon; an idle worker first asks (one query).
    const nextDue = this.busy ? 0 : await outbox.nextDueInMs();
    let claimed = 0;
    const limit = Math.min(ROUND_MAX, options.maxInFlight - this.claimed);
    if (nextDue !== null && nextDue <= 0 && limit > 0 && !this.stopping) {
      const deliveries = await outbox.claim({
        owner: this.deps.owner,
        leaseMs: options.leaseMs,
        perEndpoint: options.perEndpointConcurrency + options.perEndpointQueued,
        slots: this.freeSlots(),
        limit,
      });
      for (const delivery of deliveries) this.take(delivery);
      claimed = deliveries.length;
    }
    this.recordedSinceVacuum += recorded;
    if (options.vacuumEvery > 0 && this.recordedSinceVacuum >= options.vacuumEvery) {
      this.recordedSinceVacuum = 0;
      await outbox.vacuum();
    }
    this.busy = claimed > 0 || recorded > 0;
    // At least as long as the round took: the store serves writes between rounds too.
    if (this.busy) return Math.max(options.busyPollMs, performance.now() - started);
    if (Date.now() - this.prunedAt > PRUNE_EVERY_MS) {
      this.prunedAt = Date.now();
      await outbox.prune(RETENTION_DAYS, PRUNE_BATCH);
    }
    return nextDue !== null && nextDue > 0 ? Math.min(options.idlePollMs, nextDue) : options.idlePollMs;
  }

  /** Endpoints with deliveries claimed here (or that stopped answering), and how many more each may take. */
  private freeSlots(): Map<string, number> {
    const { perEndpointConcurrency, perEndpointQueued } = this.deps.options;
    const slots = new Map<string, number>();
    for (const [endpointId, at] of this.unanswered) {
      if (Date.now() - at > UNANSWERED_FORGET_MS) this.unanswered.delete(endpointId);
      else slots.set(endpointId, 1);
    }
    for (const [endpointId, sending] of this.sending) {
      const capacity = this.unanswered.has(endpointId) ? 1 : perEndpointConcurrency + perEndpointQueued;
      slots.set(endpointId, Math.max(0, capacity - sending - (this.queued.get(endpointId)?.length ?? 0)));
    }
    return slots;
  }

  private pause(ms: number): Promise<void> {
    if (this.woken || this.stopping) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wakeUp?.(), ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        this.woken = false;
        resolve();
      };
    });
  }

  /** A claimed delivery: sent now if its endpoint has a free slot, else when one frees. */
  private take(delivery: ClaimedDelivery): void {
    const { endpointId } = delivery;
    this.claimed++;
    if ((this.sending.get(endpointId) ?? 0) < this.deps.options.perEndpointConcurrency) this.send(delivery);
    else if (this.queued.has(endpointId)) this.queued.get(endpointId)!.push(delivery);
    else this.queued.set(endpointId, [delivery]);
  }

  private send(delivery: ClaimedDelivery): void {
    const { endpointId } = delivery;
    this.sending.set(endpointId, (this.sending.get(endpointId) ?? 0) + 1);
    const done = this.attempt(delivery)
      .catch((err: unknown) => this.warn(err, "recording a webhook attempt failed; its lease runs out"))
      .finally(() => {
        this.claimed--;
        const left = this.sending.get(endpointId)! - 1;
        if (left > 0) this.sending.set(endpointId, left);
        else this.sending.delete(endpointId);
        this.attempts.delete(done);
        // The next one queued for this endpoint takes the slot (on stop they stay: their leases are given back).
        const waiting = this.queued.get(endpointId);
        const next = waiting?.shift();
        if (waiting?.length === 0) this.queued.delete(endpointId);
        if (next && !this.stopping) this.send(next);
      });
    this.attempts.add(done);
  }

  /** One attempt, its outcome handed to the recorder (a 410 recorded at once). */
  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const outcome = await attemptDelivery(delivery, {
      ...this.deps,
      retry: this.deps.options.retry,
      stopping: () => this.stopping,
    });
    if (outcome.cut) return; // stop() gives the lease back
    if (outcome.answered === false) this.unanswered.set(delivery.endpointId, Date.now());
    else if (outcome.answered) this.unanswered.delete(delivery.endpointId);
    if (outcome.record.entry.status === 410) return this.recorder.gone(outcome);
    this.recorder.add(outcome);
    // Recorded by the next round (within busyPollMs) with every other attempt finished by then.
    if (!this.busy) this.wake();
  }

  private warn(err: unknown, message: string): void {
    const e = err instanceof Error ? { name: err.name, message: err.message.slice(0, 300) } : {};
    this.deps.logger.warn({ err: e }, message);
  }
}
