import { SqlError, type SqlDriver, type SqlExecutor } from "../db";
import { errorBody, type ApiError } from "../http/errors";
import type { Operation, OperationError, OperationStatus, SignedTransaction } from "./operation";

/** The columns toOperation reads (also GET /nft/operations' list, server/engine/operation-list.ts). */
export const COLUMNS = `id, chain_id, from_address, operation, contract_address, fingerprint, idempotency_key, status,
  nonce::text AS nonce, tx_to, tx_data, tx_value, gas_limit, transactions, context, result, error,
  response_status, response_body, block_number::text AS block_number, block_hash,
  pending_since::text AS pending_since, pending_since_at, final, reorgs, access_key_id, via, created_at, updated_at`;

export interface OperationRow {
  id: string;
  chain_id: string;
  from_address: string;
  operation: string;
  contract_address: string | null;
  fingerprint: string;
  idempotency_key: string | null;
  status: OperationStatus;
  nonce: string | null;
  tx_to: string | null;
  tx_data: string | null;
  tx_value: string | null;
  gas_limit: string | null;
  transactions: SignedTransaction[] | string;
  context: Record<string, unknown> | string;
  result: Record<string, unknown> | string | null;
  error: OperationError | string | null;
  response_status: number | null;
  response_body: string | null;
  block_number: string | null;
  block_hash: string | null;
  pending_since: string | null;
  pending_since_at: Date | string | null;
  final: boolean;
  reorgs: number;
  access_key_id: string | null;
  via: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** Fields the engine changes after the insert, and their columns: the only names put into SQL text. */
export interface OperationPatch {
  status?: OperationStatus;
  nonce?: number;
  contractAddress?: string | null;
  transactions?: SignedTransaction[];
  result?: Record<string, unknown> | null;
  error?: OperationError | null;
  response?: { status: number; body: string } | null;
  blockNumber?: number | null;
  blockHash?: string | null;
  pendingSince?: number | null;
  pendingSinceAt?: Date | null;
  final?: boolean;
  reorgs?: number;
}

/** A second request raced this one to the same Idempotency-Key. */
export class IdempotencyKeyTaken extends Error {}

/**
 * The store refused a row whose nonce another unfinished operation holds, or whose transaction
 * hash another operation holds (migration 33): whoever wrote second must take another nonce.
 */
export class NonceTaken extends Error {}

/**
 * An approved operation was resumed (or decided) by another request meanwhile: this one must send
 * nothing, and recorded nothing.
 */
export class NotAwaitingApproval extends Error {}

/**
 * Records a held operation's approval, on `tx`: the transaction that resumes the operation (its
 * nonce and signed transaction stored) or fails it. False when another decision came first (or
 * the approval expired): the transaction is rolled back, nothing is sent.
 */
export type ApprovalDecision = (tx: SqlExecutor) => Promise<boolean>;

/** Whether `err` is the store refusing a nonce or a transaction hash held by another operation. */
function nonceTakenError(err: unknown): NonceTaken | null {
  if (!(err instanceof SqlError) || err.code !== "23505") return null;
  if (err.constraint !== "operations_nonce_holder_idx" && err.constraint !== "operation_transactions_pkey") return null;
  return new NonceTaken(`Nonce or transaction held by another operation (${err.constraint})`);
}

/** Rows written in one statement at most. */
const MAX_BATCH = 500;

type Write =
  | { kind: "insert"; op: Operation; lease: { owner: string; ms: number } }
  | { kind: "update"; id: string; patch: OperationPatch }
  | { kind: "delete"; id: string };

type QueuedWrite = Write & { done: (err?: unknown) => void };

/** The columns a patch can set, with their SQL types: the only names put into SQL text. */
const PATCH_COLUMNS: Array<[keyof OperationPatch, string, string]> = [
  ["status", "status", "text"],
  ["nonce", "nonce", "bigint"],
  ["contractAddress", "contract_address", "text"],
  ["transactions", "transactions", "jsonb"],
  ["result", "result", "jsonb"],
  ["error", "error", "jsonb"],
  ["response", "response_status", "integer"],
  ["response", "response_body", "text"],
  ["blockNumber", "block_number", "bigint"],
  ["blockHash", "block_hash", "text"],
  ["pendingSince", "pending_since", "bigint"],
  ["pendingSinceAt", "pending_since_at", "timestamptz"],
  ["final", "final", "boolean"],
  ["reorgs", "reorgs", "integer"],
];

/**
 * Operations in SQL (PGlite or PostgreSQL). Several processes may share the table: each unfinished
 * operation is followed by the process holding its lease, and a lease left by a process that went
 * away runs out, so another one takes the operation over.
 *
 * Writes are group-committed: those asked for while a write is under way (or in the same turn of
 * the event loop) go together, as one multi-row statement per kind, in one transaction. PGlite runs
 * one statement at a time and pays a WAL flush per commit: 200 concurrent writes one by one queued
 * each request behind the others' commits. Each caller still resolves only once its row is
 * committed, so an operation is recorded before its transaction is broadcast.
 */
export class OperationStore {
  private queue: QueuedWrite[] = [];
  private writing?: Promise<void>;

  constructor(private readonly db: SqlDriver) {}

  get backend(): "pglite" | "postgres" {
    return this.db.backend;
  }

  /** Records a new operation leased to `owner`; throws IdempotencyKeyTaken on a key already used. */
  insert(op: Operation, lease: { owner: string; ms: number }): Promise<void> {
    return this.enqueue({ kind: "insert", op, lease });
  }

  update(id: string, patch: OperationPatch): Promise<void> {
    if (!PATCH_COLUMNS.some(([field]) => patch[field] !== undefined)) return Promise.resolve();
    return this.enqueue({ kind: "update", id, patch });
  }

  /** Forgets an operation whose transaction was never broadcast: its request stored nothing. */
  delete(id: string): Promise<void> {
    return this.enqueue({ kind: "delete", id });
  }

  /** Resolves once every write asked for so far is done. */
  async idle(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private enqueue(write: Write): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ ...write, done: (err) => (err === undefined ? resolve() : reject(err)) } as QueuedWrite);
      // Writes asked for in the same turn of the event loop wait for each other (setImmediate).
      this.writing ??= new Promise<void>((started) => setImmediate(started)).then(() => this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) await this.write(this.queue.splice(0, MAX_BATCH));
    } finally {
      this.writing = undefined;
    }
  }

  /** Writes a batch; if it fails as a whole, each write alone, so that one bad row fails only its caller. */
  private async write(batch: QueuedWrite[]): Promise<void> {
    try {
      const refused = await this.writeTogether(batch);
      for (const write of batch)
        write.done(refused.has(write) ? new IdempotencyKeyTaken("Idempotency-Key already used") : undefined);
    } catch (err) {
      if (batch.length === 1) return batch[0].done(nonceTakenError(err) ?? err);
      for (const write of batch) await this.write([write]);
    }
  }

  /** One statement per kind of write (per set of columns for updates), in one transaction when several. */
  private async writeTogether(batch: QueuedWrite[]): Promise<Set<QueuedWrite>> {
    const inserts = batch.filter((w): w is Extract<QueuedWrite, { kind: "insert" }> => w.kind === "insert");
    const updates = batch.filter((w): w is Extract<QueuedWrite, { kind: "update" }> => w.kind === "update");
    const deletes = batch.filter((w) => w.kind === "delete");
    const statements: Array<(db: SqlExecutor) => Promise<void>> = [];
    const refused = new Set<QueuedWrite>();
    if (inserts.length > 0) {
      statements.push(async (db) => {
        const inserted = await insertRows(db, inserts);
        for (const write of inserts) if (!inserted.has(write.op.id)) refused.add(write);
      });
    }
    for (const [columns, rows] of groupUpdates(updates)) statements.push((db) => updateRows(db, columns, rows));
    if (deletes.length > 0) {
      const ids = deletes.map((w) => (w as { id: string }).id);
      statements.push(async (db) => {
        await db.query("DELETE FROM operations WHERE id = ANY($1::text[])", [ids]);
      });
    }
    if (statements.length === 1) await statements[0](this.db);
    else
      await this.db.transaction(async (tx) => {
        for (const statement of statements) await statement(tx);
      });
    return refused;
  }

  /**
   * Turns a held operation (awaiting_approval) into a queued one holding its nonce and signed
   * transaction, leased to `lease.owner`, in the transaction that records its approval (`decide`):
   * approved is never left unsent by a crash, since the follower sends a queued row by itself. A
   * conditional UPDATE, so one request alone resumes it. Throws NonceTaken as an insert would,
   * NotAwaitingApproval when it is not held any more or another decision came first (recording nothing).
   */
  async resumeApproved(op: Operation, lease: { owner: string; ms: number }, decide: ApprovalDecision): Promise<void> {
    const call = op.call!;
    try {
      await this.db.transaction(async (tx) => {
        if (!(await decide(tx))) throw new NotAwaitingApproval(`Operation ${op.id}'s approval is decided already`);
        const { rowCount } = await tx.query(
          `UPDATE operations SET status = 'queued', final = false, nonce = $2, contract_address = $3, tx_to = $4,
             tx_data = $5, tx_value = $6, gas_limit = $7, transactions = $8::jsonb, response_status = NULL,
             response_body = NULL, lease_owner = $9, lease_until = now() + $10 * interval '1 millisecond',
             updated_at = now()
           WHERE id = $1 AND status = 'awaiting_approval'`,
          [
            op.id,
            op.nonce,
            op.contractAddress,
            call.to,
            call.data,
            call.value.toString(),
            call.gasLimit.toString(),
            JSON.stringify(op.transactions),
            lease.owner,
            lease.ms,
          ],
        );
        if (rowCount === 0) throw new NotAwaitingApproval(`Operation ${op.id} is not awaiting approval`);
      });
    } catch (err) {
      throw nonceTakenError(err) ?? err;
    }
  }

  /** Fails a held operation with `error` as its approval is recorded (see failApprovedIn). */
  failApproved(id: string, error: ApiError, decide: ApprovalDecision): Promise<void> {
    return failApprovedIn(this.db, id, error, decide);
  }

  async find(id: string): Promise<Operation | null> {
    const { rows } = await this.db.query<OperationRow>(`SELECT ${COLUMNS} FROM operations WHERE id = $1`, [id]);
    return rows.length > 0 ? toOperation(rows[0]) : null;
  }

  async findByIdempotencyKey(chainId: string, from: string, key: string): Promise<Operation | null> {
    const { rows } = await this.db.query<OperationRow>(
      `SELECT ${COLUMNS} FROM operations WHERE chain_id = $1 AND from_address = $2 AND idempotency_key = $3`,
      [chainId, from, key],
    );
    return rows.length > 0 ? toOperation(rows[0]) : null;
  }

  /**
   * Leases up to `limit` operations not yet final (unfinished, or finished in a block that a reorg can still undo) to `owner`: its own, those nobody holds, and those
   * whose holder's lease ran out, but for the `known` ids. SKIP LOCKED keeps two processes from
   * claiming the same rows.
   */
  async claimUnfinished(
    chainId: string,
    owner: string,
    leaseMs: number,
    limit: number,
    known: readonly string[] = [],
  ): Promise<Operation[]> {
    // `known`: what the caller already follows or handles; their rows are neither claimed nor read
    // (200 operations in flight were read back in full at every scan).
    const { rows } = await this.db.query<OperationRow>(
      `UPDATE operations SET lease_owner = $2, lease_until = now() + $3 * interval '1 millisecond'
       WHERE id IN (
         SELECT id FROM operations
         WHERE NOT final AND chain_id = $1
           AND (lease_owner = $2 OR lease_until IS NULL OR lease_until < now())
           AND id <> ALL($5::text[])
         ORDER BY created_at
         LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [chainId, owner, leaseMs, limit, known],
    );
    return rows.map(toOperation);
  }

  /** Renews `owner`'s leases on the unfinished operations `ids` it follows. */
  async renewLeases(owner: string, ids: readonly string[], leaseMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query(
      `UPDATE operations SET lease_until = now() + $3 * interval '1 millisecond'
       WHERE id = ANY($2::text[]) AND lease_owner = $1 AND NOT final`,
      [owner, ids, leaseMs],
    );
  }

  /** Lets other processes take over `owner`'s unfinished operations at once (a clean shutdown). */
  async releaseLeases(owner: string): Promise<void> {
    await this.db.query(
      "UPDATE operations SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND NOT final",
      [owner],
    );
  }

  /** Every lease on chain `chainId` at once: for PGlite, whose data directory one process alone can open. */
  async releaseAllLeases(chainId: string): Promise<void> {
    await this.db.query(
      "UPDATE operations SET lease_owner = NULL, lease_until = NULL WHERE chain_id = $1 AND lease_owner IS NOT NULL",
      [chainId],
    );
  }

  /**
   * Nonces held by operations of `from` (only those below `below`, when given), lowest first: every
   * one not yet final. A confirmed operation whose block a reorg may still take needs its nonce
   * again: handing it to a new write would make two operations of one transaction (the same call
   * signed at the same nonce).
   */
  async heldNonces(chainId: string, from: string, below = Number.MAX_SAFE_INTEGER): Promise<number[]> {
    const { rows } = await this.db.query<{ nonce: string }>(
      `SELECT nonce::text AS nonce FROM operations
       WHERE chain_id = $1 AND from_address = $2 AND NOT final AND nonce < $3
       ORDER BY nonce`,
      [chainId, from, below],
    );
    return rows.map((row) => Number(row.nonce));
  }
}

/**
 * Operations that share a transaction with another one (a hash of theirs registered to another
 * operation, migration 33), or a mined nonce of their sender: each is a request answered with a
 * transaction that was not its own alone (issue 51). Must stay 0: /metrics'
 * operations_sharing_transaction, asserted by the soak and the crash tests.
 */
export async function countOperationsSharingTransaction(db: SqlExecutor): Promise<number> {
  const { rows } = await db.query<{ count: string }>(
    `SELECT ((SELECT count(*) FROM operations o
              WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(o.transactions) AS t(tx)
                            JOIN operation_transactions h ON h.hash = t.tx->>'hash'
                            WHERE h.operation_id <> o.id))
           + (SELECT coalesce(sum(n), 0) FROM (
                SELECT count(*) AS n FROM operations
                WHERE block_number IS NOT NULL AND nonce IS NOT NULL
                GROUP BY chain_id, from_address, nonce HAVING count(*) > 1) d))::text AS count`,
  );
  return Number(rows[0].count);
}

/**
 * Records a held operation (awaiting_approval) on `tx`, the transaction that records its approval:
 * false when its Idempotency-Key is already taken (the caller answers the first one's state).
 */
export async function insertHeldIn(tx: SqlExecutor, op: Operation): Promise<boolean> {
  // Final and leased to nobody: the follower never claims it while it waits.
  const inserted = await insertRows(tx, [{ op, lease: { owner: "", ms: 0 } }]);
  return inserted.has(op.id);
}

/** Fails a held operation with `error`, on `tx`; false when it is not awaiting approval (any more). */
export async function failAwaitingIn(tx: SqlExecutor, id: string, error: ApiError): Promise<boolean> {
  const { rowCount } = await tx.query(
    `UPDATE operations SET status = 'failed', final = true, error = $2::jsonb, response_status = $3,
       response_body = $4, updated_at = now()
     WHERE id = $1 AND status = 'awaiting_approval'`,
    [
      id,
      JSON.stringify({ code: error.code, message: error.message }),
      error.status,
      JSON.stringify(errorBody(error, id)),
    ],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Fails a held operation with `error` (its simulation refused it once approved, its wallet is
 * gone) in the transaction that records its approval (`decide`). Throws NotAwaitingApproval,
 * recording nothing, when another decision came first or the operation is not held any more.
 */
export async function failApprovedIn(
  db: SqlDriver,
  id: string,
  error: ApiError,
  decide: ApprovalDecision,
): Promise<void> {
  await db.transaction(async (tx) => {
    if (!(await decide(tx)) || !(await failAwaitingIn(tx, id, error)))
      throw new NotAwaitingApproval(`Operation ${id} is not awaiting approval`);
  });
}

const json = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);
const numberOrNull = (value: string | null) => (value === null ? null : Number(value));

export function toOperation(row: OperationRow): Operation {
  return {
    id: row.id,
    chainId: row.chain_id,
    from: row.from_address,
    operation: row.operation,
    contractAddress: row.contract_address,
    fingerprint: row.fingerprint,
    idempotencyKey: row.idempotency_key,
    status: row.status,
    nonce: numberOrNull(row.nonce),
    call:
      row.tx_data === null
        ? null
        : {
            to: row.tx_to,
            data: row.tx_data,
            value: BigInt(row.tx_value ?? "0"),
            gasLimit: BigInt(row.gas_limit ?? "0"),
          },
    transactions: json(row.transactions),
    context: json(row.context),
    result: row.result === null ? null : json(row.result),
    error: row.error === null ? null : json(row.error),
    response:
      row.response_status === null || row.response_body === null
        ? null
        : { status: row.response_status, body: row.response_body },
    blockNumber: numberOrNull(row.block_number),
    blockHash: row.block_hash,
    pendingSince: numberOrNull(row.pending_since),
    pendingSinceAt: row.pending_since_at === null ? null : new Date(row.pending_since_at),
    final: row.final,
    reorgs: Number(row.reorgs),
    accessKeyId: row.access_key_id,
    via: row.via ?? null,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Columns of an insert, as the JSON keys of each row: absent keys (and JSON nulls) are NULL. */
const INSERT_COLUMNS = `id text, chain_id text, from_address text, operation text, contract_address text,
  fingerprint text, idempotency_key text, status text, nonce bigint, tx_to text, tx_data text, tx_value text,
  gas_limit text, transactions text, context text, result text, response_status integer, response_body text,
  lease_owner text, lease_ms double precision, access_key_id text, final boolean, via text`;

/**
 * Inserts the rows of `writes` in one statement and answers the ids inserted: a row whose
 * Idempotency-Key is already taken (by an earlier row, or one of this batch) is skipped, not an
 * error that would fail the whole batch. JSON columns travel as text, so that a null is SQL NULL.
 */
async function insertRows(
  db: SqlExecutor,
  writes: Array<{ op: Operation; lease: { owner: string; ms: number } }>,
): Promise<Set<string>> {
  const rows = writes.map(({ op, lease }) => ({
    id: op.id,
    chain_id: op.chainId,
    from_address: op.from,
    operation: op.operation,
    contract_address: op.contractAddress,
    fingerprint: op.fingerprint,
    idempotency_key: op.idempotencyKey,
    status: op.status,
    nonce: op.nonce,
    tx_to: op.call?.to ?? null,
    tx_data: op.call?.data ?? null,
    tx_value: op.call?.value.toString() ?? null,
    gas_limit: op.call?.gasLimit.toString() ?? null,
    transactions: JSON.stringify(op.transactions),
    context: JSON.stringify(op.context),
    result: op.result === null ? null : JSON.stringify(op.result),
    response_status: op.response?.status ?? null,
    response_body: op.response?.body ?? null,
    lease_owner: lease.owner,
    lease_ms: lease.ms,
    access_key_id: op.accessKeyId,
    final: op.final,
    via: op.via ?? null,
  }));
  const { rows: inserted } = await db.query<{ id: string }>(
    `INSERT INTO operations (id, chain_id, from_address, operation, contract_address, fingerprint,
       idempotency_key, status, nonce, tx_to, tx_data, tx_value, gas_limit, transactions, context, result,
       response_status, response_body, lease_owner, lease_until, access_key_id, final, via)
     SELECT id, chain_id, from_address, operation, contract_address, fingerprint, idempotency_key, status, nonce,
       tx_to, tx_data, tx_value, gas_limit, transactions::jsonb, context::jsonb, result::jsonb, response_status,
       response_body, lease_owner, now() + lease_ms * interval '1 millisecond', access_key_id, final, via
     FROM jsonb_to_recordset($1::jsonb) AS r(${INSERT_COLUMNS})
     ON CONFLICT (chain_id, from_address, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
     RETURNING id`,
    [JSON.stringify(rows)],
  );
  return new Set(inserted.map((row) => row.id));
}

/**
 * Updates by the set of columns they change, each operation's patches of the batch merged in the
 * order asked (a later value wins), so that a statement never sees one id twice.
 */
function groupUpdates(
  updates: Array<{ id: string; patch: OperationPatch }>,
): Map<string, Array<Record<string, unknown>>> {
  const merged = new Map<string, OperationPatch>();
  for (const { id, patch } of updates) merged.set(id, { ...merged.get(id), ...definedOnly(patch) });
  const groups = new Map<string, Array<Record<string, unknown>>>();
  for (const [id, patch] of merged) {
    const row: Record<string, unknown> = { id };
    const columns: string[] = [];
    for (const [field, column] of PATCH_COLUMNS) {
      const value = patch[field];
      if (value === undefined) continue;
      columns.push(column);
      row[column] = columnValue(column, value);
    }
    const key = columns.join(",");
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  return groups;
}

async function updateRows(db: SqlExecutor, columnList: string, rows: Array<Record<string, unknown>>): Promise<void> {
  const columns = columnList.split(",");
  const types = new Map(PATCH_COLUMNS.map(([, column, type]) => [column, type]));
  // jsonb columns travel as text (a null stays SQL NULL) and are cast back.
  const declared = columns.map((c) => `${c} ${types.get(c) === "jsonb" ? "text" : types.get(c)}`).join(", ");
  const sets = columns.map((c) => `${c} = v.${c}${types.get(c) === "jsonb" ? "::jsonb" : ""}`).join(", ");
  await db.query(
    `UPDATE operations AS o SET ${sets}, updated_at = now()
     FROM jsonb_to_recordset($1::jsonb) AS v(id text, ${declared})
     WHERE o.id = v.id`,
    [JSON.stringify(rows)],
  );
}

function definedOnly(patch: OperationPatch): OperationPatch {
  return Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)) as OperationPatch;
}

/** A patch field as its column's JSON value. */
function columnValue(column: string, value: unknown): unknown {
  switch (column) {
    case "transactions":
    case "result":
    case "error":
      return value === null ? null : JSON.stringify(value);
    case "response_status":
      return (value as OperationPatch["response"])?.status ?? null;
    case "response_body":
      return (value as OperationPatch["response"])?.body ?? null;
    default:
      return value;
  }
}
