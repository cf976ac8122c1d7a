import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { getAddress } from "ethers";
import type { ChainClient } from "../chain/chain-client";
import type { SqlExecutor } from "../db";
import { fingerprintOf, type Operation, type TransactionEngine, type WriteAnswer } from "../engine";
import { ApiError, type ErrorCode } from "../http/errors";
import type { Logger } from "../http/logger";
import type { HeldWallets } from "../signers/signer";
import { emitEvent } from "../webhooks/events";
import { toBatch, type BatchRecord, type JobError, type JobRecord, type JobStore } from "./job-store";
import { JOB_OPERATIONS } from "./operation-kinds";
import { batchCallData } from "./planner";
import { unlistedFor } from "../drops/unlisted";

export interface JobRunnerOptions {
  /** JOB_CONCURRENCY: batches of one job unconfirmed at once, across every instance. */
  concurrency: number;
  /** How long a claim on a batch lasts without renewal: then another process takes it over. */
  leaseMs: number;
  /** How often the store is scanned for work, and an operation asked about. */
  pollMs: number;
  /** How long a batch refused for a passing reason (chain down, key in use) waits before it is tried again. */
  retryMs: number;
}

export const DEFAULT_RUNNER_OPTIONS: JobRunnerOptions = {
  concurrency: 4,
  leaseMs: 15_000,
  pollMs: 250,
  retryMs: 2_000,
};

/** Refusals that pause the job: the chain would revert the batch, or the wallet cannot pay or sign for it. */
const PAUSING: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "NOT_CONTRACT_OWNER",
  "MAX_SUPPLY_EXCEEDED",
  "CONTRACT_PAUSED",
  "CONTRACT_REVERTED",
  "INVALID_MINT_AMOUNT",
  "INSUFFICIENT_FUNDS",
  "SPEND_LIMIT_EXCEEDED",
  "WALLET_NOT_FOUND",
  "CONTRACT_NOT_FOUND",
  "TOKEN_NOT_FOUND",
  "UNSUPPORTED_CONTRACT",
  "SIGNER_UNAVAILABLE" as ErrorCode,
]);

interface BatchRow {
  job_id: string;
  idx: number;
  first_row: number;
  row_count: number;
  status: BatchRecord["status"];
  operation_id: string | null;
  gas_used: string | null;
  wei_spent: string | null;
  error: JobError | null;
}

/** How long stop() waits for batches still inside their submit. */
const STOP_WAIT_MS = 2_000;

const RETURNING = "RETURNING job_id, idx, first_row, row_count, status, operation_id, gas_used, wei_spent, error";

/**
 * Runs jobs: claims batches in the store (a lease per batch, under the job's row lock, so several
 * processes share a job and JOB_CONCURRENCY holds across them), sends each as an operation of the
 * engine with the idempotency key `job:{id}:{batch}` (a batch claimed again after a crash finds its
 * operation instead of sending another), follows it, and records its rows. Needs no request: a
 * restarted process picks up where the store says.
 */
export class JobRunner {
  readonly owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  private readonly held = new Map<string, Promise<void>>();
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private stopped = false;
  private readonly listeners = new Set<(jobId: string) => void>();

  constructor(
    private readonly store: JobStore,
    private readonly deps: { engine: TransactionEngine; wallets: HeldWallets; chain: ChainClient; logger: Logger },
    private readonly options: JobRunnerOptions = DEFAULT_RUNNER_OPTIONS,
  ) {}

  async start(): Promise<void> {
    // On PGlite this process owns the store: claims left by an earlier run are free at once.
    if (this.store.db.backend === "pglite")
      await this.store.db.query(
        `UPDATE job_batches SET lease_owner = NULL, lease_until = NULL
         WHERE status IN ('sending', 'sent') AND job_id IN (SELECT id FROM jobs WHERE chain_id = $1)`,
        [this.chainId],
      );
    this.schedule(0);
  }

  /**
   * Stops claiming. Batches being followed stop at once; a batch inside its submit (which may wait
   * for its confirmation up to TX_TIMEOUT_MS) is waited for a moment only: its claim stays in the
   * store, and whoever takes it over finds its operation by its idempotency key.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    await Promise.race([Promise.allSettled([...this.held.values()]), sleep(STOP_WAIT_MS)]);
  }

  /** The chain this runner runs the jobs of: each chain's unit has its own runner. */
  private get chainId(): string {
    return this.deps.chain.options.chainId.toString();
  }

  /** Looks for work now (a job made or resumed). */
  kick(): void {
    if (!this.stopped && !this.ticking) this.schedule(0);
  }

  /** Called with a job's id whenever one of its batches changes in this process (the SSE stream listens). */
  onChange(listener: (jobId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.ticking = this.tick()
        .catch((err: unknown) => this.deps.logger.warn({ err }, "job runner: scan failed"))
        .finally(() => {
          this.ticking = undefined;
          if (!this.stopped) this.schedule(this.options.pollMs);
        });
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.held.size > 0) {
      await this.store.db.query(
        `UPDATE job_batches SET lease_until = now() + $2 * interval '1 millisecond'
         WHERE lease_owner = $1 AND status IN ('sending', 'sent')`,
        [this.owner, this.options.leaseMs],
      );
    }
    const { rows } = await this.store.db.query<{ job_id: string }>(
      `SELECT DISTINCT b.job_id FROM job_batches b JOIN jobs j ON j.id = b.job_id
       WHERE j.chain_id = $1 AND ((j.status = 'running' AND b.status = 'pending')
          OR (b.status IN ('sending', 'sent') AND (b.lease_until IS NULL OR b.lease_until < now())))`,
      [this.chainId],
    );
    for (const { job_id } of rows) {
      if (this.stopped) return;
      const claimed = await this.claim(job_id);
      if (!claimed) continue;
      for (const batch of claimed.batches) {
        const key = `${batch.jobId}:${batch.index}`;
        if (this.held.has(key)) continue;
        const work = this.run(claimed.job, batch)
          .catch((err: unknown) =>
            this.deps.logger.error({ err, jobId: batch.jobId, batch: batch.index }, "job runner: batch failed"),
          )
          .finally(() => this.held.delete(key));
        this.held.set(key, work);
      }
    }
  }

  /** Under the job's lock: batches whose claim lapsed, then new ones up to JOB_CONCURRENCY in flight. */
  private claim(jobId: string): Promise<{ job: JobRecord; batches: BatchRecord[] } | null> {
    const lease = [this.owner, this.options.leaseMs];
    return this.store.db.transaction(async (tx) => {
      const job = await this.store.lock(tx, jobId);
      if (!job) return null;
      const { rows: lapsed } = await tx.query<BatchRow>(
        `UPDATE job_batches SET lease_owner = $2, lease_until = now() + $3 * interval '1 millisecond'
         WHERE job_id = $1 AND status IN ('sending', 'sent') AND (lease_until IS NULL OR lease_until < now())
         ${RETURNING}`,
        [jobId, ...lease],
      );
      let fresh: BatchRow[] = [];
      if (job.status === "running") {
        const { rows } = await tx.query<{ n: string }>(
          "SELECT count(*)::text AS n FROM job_batches WHERE job_id = $1 AND status IN ('sending', 'sent')",
          [jobId],
        );
        const room = this.options.concurrency - Number(rows[0].n);
        if (room > 0) {
          fresh = (
            await tx.query<BatchRow>(
              `UPDATE job_batches SET status = 'sending', lease_owner = $2,
                 lease_until = now() + $3 * interval '1 millisecond'
               WHERE job_id = $1 AND idx IN (SELECT idx FROM job_batches WHERE job_id = $1 AND status = 'pending'
                 ORDER BY idx LIMIT $4 FOR UPDATE SKIP LOCKED)
               ${RETURNING}`,
              [jobId, ...lease, room],
            )
          ).rows;
        }
      }
      const batches = [...lapsed, ...fresh].map(toBatch).sort((a, b) => a.index - b.index);
      return { job, batches };
    });
  }

  private async run(job: JobRecord, batch: BatchRecord): Promise<void> {
    const operationId = batch.operationId ?? (await this.send(job, batch));
    if (operationId) await this.follow(job, batch.index, operationId);
  }

  /** Sends a claimed batch (or finds what an earlier claim sent); its operation id, or null when nothing went out. */
  private async send(job: JobRecord, batch: BatchRecord): Promise<string | null> {
    const operation = JOB_OPERATIONS[job.kind];
    const fingerprint = fingerprintOf(operation, { jobId: job.id, batch: batch.index });
    const idempotencyKey = `job:${job.id}:${batch.index}`;
    try {
      const signer = await this.deps.wallets.signerFor(job.from);
      const replayed = await this.deps.engine.replay(signer.address, idempotencyKey, fingerprint);
      if (replayed) return await this.markSent(job.id, batch.index, operationIdOf(replayed));
      // A claim taken over from another process may belong to a job paused or cancelled since.
      const current = await this.store.find(job.id);
      if (current?.status !== "running") {
        await this.release(job.id, batch.index, current?.status === "cancelled" ? "cancelled" : "pending");
        return null;
      }
      let entries = await this.store.batchEntries(job.id, batch.index);
      if (job.kind === "whitelist") {
        const accounts = entries.map((e) => getAddress(e.address));
        const { unlisted } = await unlistedFor(this.deps.chain, job.contractAddress, signer.address, accounts);
        const fresh = new Set(unlisted);
        entries = entries.filter((_, i) => fresh.has(accounts[i]));
        if (entries.length === 0) {
          await this.recordConfirmed(job.id, batch.index, null);
          return null;
        }
      }
      const answer = await this.deps.engine.submit({
        operation,
        signer,
        to: job.contractAddress,
        data: batchCallData(job.kind, entries),
        context: { jobId: job.id, batch: batch.index },
        fingerprint,
        idempotencyKey,
        accessKeyId: job.accessKeyId,
        via: job.via,
      });
      return await this.markSent(job.id, batch.index, operationIdOf(answer));
    } catch (err) {
      const apiError = err instanceof ApiError ? err : undefined;
      if (apiError?.code === "TRANSACTION_ABANDONED") {
        // Withdrawn before its broadcast (resend-guard.ts): the job was cancelled meanwhile.
        await this.release(job.id, batch.index, "cancelled");
      } else if (apiError && PAUSING.has(apiError.code)) {
        await this.pause(job.id, batch.index, { code: apiError.code, message: apiError.message });
      } else {
        this.deps.logger.warn(
          { jobId: job.id, batch: batch.index, code: apiError?.code, err: apiError ? undefined : err },
          "job batch not sent; tried again shortly",
        );
        await this.retryLater(job.id, batch.index);
      }
      return null;
    }
  }

  /** Asks about a batch's operation until it is confirmed or failed, then records its rows. */
  private async follow(job: JobRecord, index: number, operationId: string): Promise<void> {
    while (!this.stopped) {
      const op = await this.deps.engine.find(operationId);
      if (!op) {
        // Forgotten by the engine (its broadcast was refused): the batch is sent anew.
        await this.retryLater(job.id, index);
        return;
      }
      if (op.status === "confirmed") return this.recordConfirmed(job.id, index, op);
      if (op.status === "failed") return this.recordFailed(job.id, index, op);
      await sleep(this.options.pollMs);
    }
  }

  private async markSent(jobId: string, index: number, operationId: string): Promise<string> {
    await this.store.db.query(
      "UPDATE job_batches SET status = 'sent', operation_id = $3 WHERE job_id = $1 AND idx = $2 AND status = 'sending'",
      [jobId, index, operationId],
    );
    this.changed(jobId);
    return operationId;
  }

  /** Gives a claim back: tried again once `retryMs` has passed (by any process). */
  private async retryLater(jobId: string, index: number): Promise<void> {
    await this.store.db.query(
      `UPDATE job_batches SET status = 'sending', operation_id = NULL, lease_owner = NULL,
         lease_until = now() + $3 * interval '1 millisecond'
       WHERE job_id = $1 AND idx = $2 AND status IN ('sending', 'sent')`,
      [jobId, index, this.options.retryMs],
    );
  }

  private async release(jobId: string, index: number, status: "pending" | "cancelled"): Promise<void> {
    await this.store.db.query(
      `UPDATE job_batches SET status = $3, lease_owner = NULL, lease_until = NULL
       WHERE job_id = $1 AND idx = $2 AND status = 'sending'`,
      [jobId, index, status],
    );
    this.changed(jobId);
  }

  /** The batch would revert: it goes back to pending and the job pauses with the reason. */
  private async pause(jobId: string, index: number, error: JobError): Promise<void> {
    await this.store.db.transaction(async (tx) => {
      const job = await this.store.lock(tx, jobId);
      await tx.query(
        `UPDATE job_batches SET status = $3, lease_owner = NULL, lease_until = NULL
         WHERE job_id = $1 AND idx = $2 AND status = 'sending'`,
        [jobId, index, job?.status === "cancelled" ? "cancelled" : "pending"],
      );
      if (job?.status === "running") {
        await tx.query("UPDATE jobs SET status = 'paused', error = $2::jsonb, updated_at = now() WHERE id = $1", [
          jobId,
          JSON.stringify(error),
        ]);
        this.deps.logger.info({ jobId, batch: index, code: error.code }, "job paused");
      }
    });
    this.changed(jobId);
  }

  /** A confirmed batch (or a whitelist batch with nothing left to list: `op` null): its rows, and the job's end. */
  private async recordConfirmed(jobId: string, index: number, op: Operation | null): Promise<void> {
    await this.store.db.transaction(async (tx) => {
      const job = await this.store.lock(tx, jobId);
      if (!job) return;
      const result = (op?.result ?? {}) as {
        minted?: Record<string, string[]>;
        added?: string[];
        gasUsed?: string;
        weiSpent?: string;
      };
      const { rowCount } = await tx.query(
        `UPDATE job_batches SET status = 'confirmed', gas_used = $3, wei_spent = $4, lease_owner = NULL,
           lease_until = NULL, error = NULL
         WHERE job_id = $1 AND idx = $2 AND status IN ('sending', 'sent')`,
        [jobId, index, result.gasUsed ?? "0", result.weiSpent ?? "0"],
      );
      if (rowCount === 0) return; // another process recorded it
      if (job.kind === "airdrop") {
        await tx.query(
          `UPDATE job_rows r SET token_ids = m.value
           FROM jsonb_each($3::jsonb) AS m WHERE r.job_id = $1 AND r.batch = $2 AND r.address = m.key`,
          [jobId, index, JSON.stringify(result.minted ?? {})],
        );
      } else {
        await tx.query(
          `UPDATE job_rows SET state = CASE WHEN address = ANY($3::text[]) THEN 'whitelisted' ELSE 'alreadyListed' END
           WHERE job_id = $1 AND batch = $2`,
          [jobId, index, result.added ?? []],
        );
      }
      await this.finishIfDone(tx, job);
    });
    this.changed(jobId);
  }

  private async recordFailed(jobId: string, index: number, op: Operation): Promise<void> {
    await this.store.db.transaction(async (tx) => {
      const job = await this.store.lock(tx, jobId);
      if (!job) return;
      // Withdrawn by the cancel before the node had it (see resend-guard.ts): cancelled, not failed.
      const withdrawn = job.status === "cancelled" && op.error?.code === "TRANSACTION_ABANDONED";
      const { rowCount } = await tx.query(
        `UPDATE job_batches SET status = $4, error = $3::jsonb, lease_owner = NULL, lease_until = NULL
         WHERE job_id = $1 AND idx = $2 AND status IN ('sending', 'sent')`,
        [
          jobId,
          index,
          JSON.stringify(op.error ?? { code: "CONTRACT_REVERTED", message: "The batch failed" }),
          withdrawn ? "cancelled" : "failed",
        ],
      );
      if (rowCount === 0) return;
      await this.finishIfDone(tx, job);
    });
    this.changed(jobId);
  }

  /** A running job with no batch left to send or follow ends: completed, or failed when a batch failed; its webhook event in the same transaction. */
  private async finishIfDone(tx: SqlExecutor, job: JobRecord): Promise<void> {
    if (job.status !== "running") return;
    const { rows } = await tx.query<{ open: string; failed: string }>(
      `SELECT count(*) FILTER (WHERE status IN ('pending', 'sending', 'sent'))::text AS open,
              count(*) FILTER (WHERE status = 'failed')::text AS failed
       FROM job_batches WHERE job_id = $1`,
      [job.id],
    );
    if (Number(rows[0].open) > 0) return;
    const status = Number(rows[0].failed) > 0 ? "failed" : "completed";
    await tx.query("UPDATE jobs SET status = $2, updated_at = now(), finished_at = now() WHERE id = $1", [
      job.id,
      status,
    ]);
    await emitEvent(tx, {
      type: status === "completed" ? "job.completed" : "job.failed",
      data: {
        jobId: job.id,
        chainId: job.chainId,
        kind: job.kind,
        status,
        contractAddress: getAddress(job.contractAddress),
        from: job.from,
        rows: job.rows,
        batches: job.batches,
      },
      collection: job.contractAddress,
      wallet: job.from,
      orderKey: `job:${job.id}`,
    });
  }

  private changed(jobId: string): void {
    for (const listener of this.listeners) listener(jobId);
  }
}

/** The operation an answer names: a success's `operationId`, or the error's of one that failed after it was sent (reverted on chain). */
function operationIdOf(answer: WriteAnswer): string {
  const body = JSON.parse(answer.body) as { operationId?: string; error?: { operationId?: string } };
  const operationId = body.operationId ?? body.error?.operationId;
  if (!operationId) throw new ApiError("INTERNAL_ERROR", "A batch's answer named no operation");
  return operationId;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
