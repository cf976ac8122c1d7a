import { availableParallelism } from "node:os";

/**
 * Who a password hash is for, most urgent first: a login (someone waits at a prompt), one
 * account's write (POST /v2/user, a password change), a batch (createWithList: up to 1,000).
 */
export type HashLane = "login" | "account" | "batch";
const LANES: readonly HashLane[] = ["login", "account", "batch"];

export interface HashSchedulerLimits {
  /** Hashes running at once, all lanes together. */
  slots: number;
  /** Of those, at most this many for batches: the rest stay free for logins and single writes. */
  batchSlots: number;
}

/**
 * Two slots at least, at most four (libuv's default thread pool, where argon2 runs), one of
 * them never given to batches: a login waits at most for another login, never behind a batch.
 */
export function defaultHashSchedulerLimits(cpus = availableParallelism()): HashSchedulerLimits {
  const slots = Math.min(4, Math.max(2, cpus));
  return { slots, batchSlots: slots - 1 };
}

interface Waiter {
  start(): void;
  /** Drops the task unrun (its signal aborted while it waited). */
  drop(reason: unknown): void;
  signal?: AbortSignal;
}

/**
 * A priority semaphore for password hashing. Each hash is CPU and memory for tens of
 * milliseconds on a thread of libuv's pool, which runs tasks first come, first served: a
 * thousand queued batch hashes there would make a login wait for all of them. Here they wait in
 * lanes instead, and a free slot goes to the most urgent lane that has work.
 */
export class HashScheduler {
  private running = 0;
  private runningBatch = 0;
  private readonly waiting: Record<HashLane, Waiter[]> = { login: [], account: [], batch: [] };

  constructor(readonly limits: HashSchedulerLimits = defaultHashSchedulerLimits()) {
    if (limits.slots < 1 || limits.batchSlots < 1 || limits.batchSlots > limits.slots) {
      throw new RangeError("HashScheduler needs 1 <= batchSlots <= slots");
    }
  }

  /** Hashes waiting for a slot, per lane. */
  get queued(): Record<HashLane, number> {
    return { login: this.waiting.login.length, account: this.waiting.account.length, batch: this.waiting.batch.length };
  }

  /**
   * Runs `task` when a slot is free for `lane`. A task still waiting when `signal` aborts never
   * runs: it rejects with the signal's reason when its turn comes (one already running finishes).
   */
  run<T>(lane: HashLane, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      this.waiting[lane].push({
        signal,
        drop: reject,
        start: () => {
          this.running++;
          if (lane === "batch") this.runningBatch++;
          Promise.resolve()
            .then(task)
            .then(resolve, reject)
            .finally(() => {
              this.running--;
              if (lane === "batch") this.runningBatch--;
              this.dispatch();
            });
        },
      });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.running < this.limits.slots) {
      const lane = LANES.find(
        (candidate) =>
          this.waiting[candidate].length > 0 && (candidate !== "batch" || this.runningBatch < this.limits.batchSlots),
      );
      if (!lane) return;
      const waiter = this.waiting[lane].shift()!;
      // Aborted waiters are dropped when their turn comes (no listener per task: a batch queues 1,000).
      if (waiter.signal?.aborted) waiter.drop(waiter.signal.reason);
      else waiter.start();
    }
  }
}
