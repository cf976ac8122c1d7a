import type { SqlDriver, SqlExecutor } from "../db";
import type { Plan } from "./planner";
import type { JobEntry, JobKind } from "./rows";

/** awaiting_approval: held by its key's approval rule; the runner claims only running jobs (migration 37). */
export type JobStatus = "awaiting_approval" | "running" | "paused" | "completed" | "failed" | "cancelled";
export type BatchStatus = "pending" | "sending" | "sent" | "confirmed" | "failed" | "cancelled";
/** A row's state is its batch's: claimed and cancelled batches' rows are still pending. */
export type RowStatus = "pending" | "sent" | "confirmed" | "failed";

export const FINISHED: readonly JobStatus[] = ["completed", "failed", "cancelled"];

export interface JobError {
  code: string;
  message: string;
}

export interface JobRecord {
  id: string;
  seq: string;
  kind: JobKind;
  chainId: string;
  contractAddress: string;
  from: string;
  status: JobStatus;
  error: JobError | null;
  rows: number;
  batches: number;
  estimatedGas: string;
  estimatedCostWei: string;
  accessKeyId: string | null;
  /** "mcp": made by an MCP tool; its batches' operations say so too. */
  via: string | null;
  /** The approval it waited for (or waits for), when its key's rule held it. */
  approvalId: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

/** What a job's event streams show. */
export interface JobProgress {
  status: JobStatus;
  rows: number;
  error: JobError | null;
  rowsByState: Record<RowStatus, number>;
}

/** Rows by state from the row counts of each batch status: claimed and cancelled batches' rows are pending. */
function byRowState(counts: { batch_status: BatchStatus; n: string }[]): Record<RowStatus, number> {
  const states: Record<RowStatus, number> = { pending: 0, sent: 0, confirmed: 0, failed: 0 };
  for (const { batch_status: status, n } of counts) {
    const state: RowStatus = status === "sent" || status === "confirmed" || status === "failed" ? status : "pending";
    states[state] += Number(n);
  }
  return states;
}

export interface BatchRecord {
  jobId: string;
  index: number;
  first: number;
  count: number;
  status: BatchStatus;
  operationId: string | null;
  gasUsed: string | null;
  weiSpent: string | null;
  error: JobError | null;
}

export interface RowRecord {
  n: number;
  line: number;
  address: string;
  amount: string | null;
  /** The edition an airdrop row mints, on an edition contract (ERC-1155); null otherwise. */
  tokenId: string | null;
  batch: number;
  status: RowStatus;
  tokenIds: string[] | null;
  state: string | null;
  error: JobError | null;
}

interface JobRow {
  id: string;
  seq: string;
  kind: JobKind;
  chain_id: string;
  contract_address: string;
  from_address: string;
  status: JobStatus;
  error: JobError | null;
  row_count: number;
  batch_count: number;
  estimated_gas: string;
  estimated_cost_wei: string;
  access_key_id: string | null;
  via: string | null;
  approval_id: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}

interface BatchRow {
  job_id: string;
  idx: number;
  first_row: number;
  row_count: number;
  status: BatchStatus;
  operation_id: string | null;
  gas_used: string | null;
  wei_spent: string | null;
  error: JobError | null;
}

const JOB_COLUMNS = `id, seq::text AS seq, kind, chain_id, contract_address, from_address, status, error, row_count,
  batch_count, estimated_gas, estimated_cost_wei, access_key_id, via, approval_id, created_at, updated_at, finished_at`;
const BATCH_COLUMNS = "job_id, idx, first_row, row_count, status, operation_id, gas_used, wei_spent, error";
/** Rows written per statement when a job is made. */
const INSERT_CHUNK = 10_000;

const toJob = (r: JobRow): JobRecord => ({
  id: r.id,
  seq: r.seq,
  kind: r.kind,
  chainId: r.chain_id,
  contractAddress: r.contract_address,
  from: r.from_address,
  status: r.status,
  error: r.error,
  rows: Number(r.row_count),
  batches: Number(r.batch_count),
  estimatedGas: r.estimated_gas,
  estimatedCostWei: r.estimated_cost_wei,
  accessKeyId: r.access_key_id,
  via: r.via ?? null,
  approvalId: r.approval_id ?? null,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
  finishedAt: r.finished_at ? new Date(r.finished_at) : null,
});

export const toBatch = (r: BatchRow): BatchRecord => ({
  jobId: r.job_id,
  index: Number(r.idx),
  first: Number(r.first_row),
  count: Number(r.row_count),
  status: r.status,
  operationId: r.operation_id,
  gasUsed: r.gas_used,
  weiSpent: r.wei_spent,
  error: r.error,
});

/** SQL of a row's state from its batch's. */
const ROW_STATUS_SQL = `CASE b.status WHEN 'sent' THEN 'sent' WHEN 'confirmed' THEN 'confirmed' WHEN 'failed' THEN 'failed'
  ELSE 'pending' END`;

export interface NewJob {
  id: string;
  kind: JobKind;
  chainId: string;
  contractAddress: string;
  from: string;
  accessKeyId: string | null;
  via?: string | null;
  entries: JobEntry[];
  plan: Plan;
}

/** The jobs tables (migration 22). */
export class JobStore {
  constructor(readonly db: SqlDriver) {}

  /** Writes a job, its batches and its rows in one transaction. */
  async create(job: NewJob): Promise<void> {
    await this.db.transaction((tx) => this.createIn(tx, job));
  }

  /**
   * Writes a job, its batches and its rows on `tx`: running, or awaiting approval `approvalId`
   * (held by its key's approval rule: the runner leaves it until the approval starts it).
   */
  async createIn(tx: SqlExecutor, job: NewJob, approvalId?: string): Promise<void> {
    await tx.query(
      `INSERT INTO jobs (id, kind, chain_id, contract_address, from_address, status, row_count, batch_count,
           estimated_gas, estimated_cost_wei, access_key_id, via, approval_id)
         VALUES ($1, $2, $3, $4, $5, $13, $6, $7, $8, $9, $10, $11, $12)`,
      [
        job.id,
        job.kind,
        job.chainId,
        job.contractAddress,
        job.from,
        job.entries.length,
        job.plan.batches.length,
        job.plan.estimatedGas.toString(),
        job.plan.estimatedCostWei.toString(),
        job.accessKeyId,
        job.via ?? null,
        approvalId ?? null,
        approvalId ? "awaiting_approval" : "running",
      ],
    );
    await tx.query(
      `INSERT INTO job_batches (job_id, idx, first_row, row_count, status)
         SELECT $1, r.idx, r.first_row, r.row_count, 'pending'
         FROM jsonb_to_recordset($2::jsonb) AS r(idx integer, first_row integer, row_count integer)`,
      [job.id, JSON.stringify(job.plan.batches.map((b) => ({ idx: b.index, first_row: b.first, row_count: b.count })))],
    );
    const batchOf = new Int32Array(job.entries.length);
    for (const b of job.plan.batches) batchOf.fill(b.index, b.first, b.first + b.count);
    for (let start = 0; start < job.entries.length; start += INSERT_CHUNK) {
      const chunk = job.entries.slice(start, start + INSERT_CHUNK).map((e, i) => ({
        n: start + i,
        line: e.line,
        address: e.address,
        amount: job.kind === "airdrop" ? e.amount.toString() : null,
        token_id: e.tokenId?.toString() ?? null,
        batch: batchOf[start + i],
      }));
      await tx.query(
        `INSERT INTO job_rows (job_id, n, line, address, amount, token_id, batch)
           SELECT $1, r.n, r.line, r.address, r.amount, r.token_id, r.batch
           FROM jsonb_to_recordset($2::jsonb)
             AS r(n integer, line integer, address text, amount text, token_id text, batch integer)`,
        [job.id, JSON.stringify(chunk)],
      );
    }
  }

  /** Approved: a job awaiting approval runs from `tx`'s commit on; false when it is not awaiting it any more. */
  async startIn(tx: SqlExecutor, jobId: string): Promise<boolean> {
    const { rows } = await tx.query(
      "UPDATE jobs SET status = 'running', updated_at = now() WHERE id = $1 AND status = 'awaiting_approval' RETURNING id",
      [jobId],
    );
    return rows.length > 0;
  }

  /** Rejected or expired: a job awaiting approval is cancelled with `error`, on `tx` (none of its batches was sent). */
  async cancelIn(tx: SqlExecutor, jobId: string, error: JobError): Promise<void> {
    const { rows } = await tx.query(
      `UPDATE jobs SET status = 'cancelled', error = $2::jsonb, updated_at = now(), finished_at = now()
       WHERE id = $1 AND status = 'awaiting_approval' RETURNING id`,
      [jobId, JSON.stringify({ code: error.code, message: error.message })],
    );
    if (rows.length > 0)
      await tx.query("UPDATE job_batches SET status = 'cancelled' WHERE job_id = $1 AND status = 'pending'", [jobId]);
  }

  async find(id: string, db: SqlExecutor = this.db): Promise<JobRecord | null> {
    const { rows } = await db.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id]);
    return rows[0] ? toJob(rows[0]) : null;
  }

  /** Locks the job's row until the transaction ends: claims, pauses and cancels of one job take turns. */
  async lock(tx: SqlExecutor, id: string): Promise<JobRecord | null> {
    const { rows } = await tx.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`, [id]);
    return rows[0] ? toJob(rows[0]) : null;
  }

  /** Newest first, after `cursor` (a seq); only `chainIds`' jobs when given. */
  async list(limit: number, cursor?: string, chainIds?: readonly string[]): Promise<JobRecord[]> {
    const { rows } = await this.db.query<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM jobs
       WHERE ($1::bigint IS NULL OR seq < $1::bigint) AND ($3::text[] IS NULL OR chain_id = ANY($3::text[]))
       ORDER BY seq DESC LIMIT $2`,
      [cursor ?? null, limit, chainIds ? [...chainIds] : null],
    );
    return rows.map(toJob);
  }

  async batches(jobId: string, db: SqlExecutor = this.db): Promise<BatchRecord[]> {
    const { rows } = await db.query<BatchRow>(
      `SELECT ${BATCH_COLUMNS} FROM job_batches WHERE job_id = $1 ORDER BY idx`,
      [jobId],
    );
    return rows.map(toBatch);
  }

  /** A job's status and rows by state in one read (what its event streams show); null for an unknown job. */
  async progress(jobId: string): Promise<JobProgress | null> {
    const { rows } = await this.db.query<{
      status: JobStatus;
      row_count: number;
      error: JobError | null;
      batch_status: BatchStatus | null;
      n: string | null;
    }>(
      `SELECT j.status, j.row_count, j.error, b.status AS batch_status, sum(b.row_count)::text AS n
       FROM jobs j LEFT JOIN job_batches b ON b.job_id = j.id
       WHERE j.id = $1 GROUP BY j.id, b.status`,
      [jobId],
    );
    if (rows.length === 0) return null;
    return {
      status: rows[0].status,
      rows: Number(rows[0].row_count),
      error: rows[0].error,
      rowsByState: byRowState(
        rows.filter((r) => r.batch_status !== null) as { batch_status: BatchStatus; n: string }[],
      ),
    };
  }

  /** Rows by state, from the batches (no row is read). */
  async rowCounts(jobId: string): Promise<Record<RowStatus, number>> {
    const { rows } = await this.db.query<{ status: BatchStatus; n: string }>(
      "SELECT status, sum(row_count)::text AS n FROM job_batches WHERE job_id = $1 GROUP BY status",
      [jobId],
    );
    return byRowState(rows.map((r) => ({ batch_status: r.status, n: r.n })));
  }

  /** The entries of one batch, in order (with their edition, on an edition contract). */
  async batchEntries(jobId: string, index: number): Promise<JobEntry[]> {
    const { rows } = await this.db.query<{
      line: number;
      address: string;
      amount: string | null;
      token_id: string | null;
    }>("SELECT line, address, amount, token_id FROM job_rows WHERE job_id = $1 AND batch = $2 ORDER BY n", [
      jobId,
      index,
    ]);
    return rows.map((r) => ({
      line: Number(r.line),
      address: r.address,
      amount: BigInt(r.amount ?? "1"),
      ...(r.token_id !== null ? { tokenId: BigInt(r.token_id) } : {}),
    }));
  }

  /** A page of rows after `cursor` (a row number), optionally of one state; `limit` unset = all. */
  async rows(jobId: string, options: { status?: RowStatus; cursor?: number; limit?: number }): Promise<RowRecord[]> {
    const { rows } = await this.db.query<{
      n: number;
      line: number;
      address: string;
      amount: string | null;
      token_id: string | null;
      batch: number;
      status: RowStatus;
      token_ids: string[] | null;
      state: string | null;
      error: JobError | null;
    }>(
      `SELECT r.n, r.line, r.address, r.amount, r.token_id, r.batch, ${ROW_STATUS_SQL} AS status, r.token_ids, r.state,
         CASE WHEN b.status = 'failed' THEN b.error END AS error
       FROM job_rows r JOIN job_batches b ON b.job_id = r.job_id AND b.idx = r.batch
       WHERE r.job_id = $1 AND r.n > $2 AND ($3::text IS NULL OR ${ROW_STATUS_SQL} = $3::text)
       ORDER BY r.n LIMIT $4`,
      [jobId, options.cursor ?? -1, options.status ?? null, options.limit ?? null],
    );
    return rows.map((r) => ({
      n: Number(r.n),
      line: Number(r.line),
      address: r.address,
      amount: r.amount,
      tokenId: r.token_id,
      batch: Number(r.batch),
      status: r.status,
      tokenIds: r.token_ids,
      state: r.state,
      error: r.error,
    }));
  }
}
