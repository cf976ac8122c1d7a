import { isUniqueViolation, type SqlDriver } from "../db";
import type { Operation, OperationError, OperationStatus, SignedTransaction } from "./operation";

const COLUMNS = `id, chain_id, from_address, operation, contract_address, fingerprint, idempotency_key, status,
  nonce::text AS nonce, tx_to, tx_data, tx_value, gas_limit, transactions, context, result, error,
  response_status, response_body, block_number::text AS block_number, block_hash,
  pending_since::text AS pending_since, access_key_id, created_at, updated_at`;

interface OperationRow {
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
  access_key_id: string | null;
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
}

/** A second request raced this one to the same Idempotency-Key. */
export class IdempotencyKeyTaken extends Error {}

/**
 * Operations in SQL (PGlite or PostgreSQL). Several processes may share the table: each unfinished
 * operation is followed by the process holding its lease, and a lease left by a process that went
 * away runs out, so another one takes the operation over.
 */
export class OperationStore {
  constructor(private readonly db: SqlDriver) {}

  get backend(): "pglite" | "postgres" {
    return this.db.backend;
  }

  /** Records a new operation leased to `owner`; throws IdempotencyKeyTaken on a key already used. */
  async insert(op: Operation, lease: { owner: string; ms: number }): Promise<void> {
    try {
      await this.db.query(
        `INSERT INTO operations (id, chain_id, from_address, operation, contract_address, fingerprint,
           idempotency_key, status, nonce, tx_to, tx_data, tx_value, gas_limit, transactions, context, result,
           response_status, response_body, lease_owner, lease_until, access_key_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
           now() + $20 * interval '1 millisecond', $21)`,
        [
          op.id,
          op.chainId,
          op.from,
          op.operation,
          op.contractAddress,
          op.fingerprint,
          op.idempotencyKey,
          op.status,
          op.nonce,
          op.call?.to ?? null,
          op.call?.data ?? null,
          op.call?.value.toString() ?? null,
          op.call?.gasLimit.toString() ?? null,
          JSON.stringify(op.transactions),
          JSON.stringify(op.context),
          op.result === null ? null : JSON.stringify(op.result),
          op.response?.status ?? null,
          op.response?.body ?? null,
          lease.owner,
          lease.ms,
          op.accessKeyId,
        ],
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw new IdempotencyKeyTaken("Idempotency-Key already used");
      throw err;
    }
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

  async update(id: string, patch: OperationPatch): Promise<void> {
    const params: unknown[] = [id];
    const sets: string[] = [];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (patch.status !== undefined) set("status", patch.status);
    if (patch.nonce !== undefined) set("nonce", patch.nonce);
    if (patch.contractAddress !== undefined) set("contract_address", patch.contractAddress);
    if (patch.transactions !== undefined) set("transactions", JSON.stringify(patch.transactions));
    if (patch.result !== undefined) set("result", patch.result === null ? null : JSON.stringify(patch.result));
    if (patch.error !== undefined) set("error", patch.error === null ? null : JSON.stringify(patch.error));
    if (patch.response !== undefined) {
      set("response_status", patch.response?.status ?? null);
      set("response_body", patch.response?.body ?? null);
    }
    if (patch.blockNumber !== undefined) set("block_number", patch.blockNumber);
    if (patch.blockHash !== undefined) set("block_hash", patch.blockHash);
    if (patch.pendingSince !== undefined) set("pending_since", patch.pendingSince);
    if (sets.length === 0) return;
    await this.db.query(`UPDATE operations SET ${sets.join(", ")}, updated_at = now() WHERE id = $1`, params);
  }

  /** Forgets an operation whose transaction was never broadcast: its request stored nothing. */
  async delete(id: string): Promise<void> {
    await this.db.query("DELETE FROM operations WHERE id = $1", [id]);
  }

  /**
   * Leases up to `limit` unfinished operations to `owner`: its own, those nobody holds, and those
   * whose holder's lease ran out. SKIP LOCKED keeps two processes from claiming the same rows.
   */
  async claimUnfinished(chainId: string, owner: string, leaseMs: number, limit: number): Promise<Operation[]> {
    const { rows } = await this.db.query<OperationRow>(
      `UPDATE operations SET lease_owner = $2, lease_until = now() + $3 * interval '1 millisecond'
       WHERE id IN (
         SELECT id FROM operations
         WHERE status IN ('queued', 'sent') AND chain_id = $1
           AND (lease_owner = $2 OR lease_until IS NULL OR lease_until < now())
         ORDER BY created_at
         LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [chainId, owner, leaseMs, limit],
    );
    return rows.map(toOperation);
  }

  /** Lets other processes take over `owner`'s unfinished operations at once (a clean shutdown). */
  async releaseLeases(owner: string): Promise<void> {
    await this.db.query(
      "UPDATE operations SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND status IN ('queued', 'sent')",
      [owner],
    );
  }

  /** Every lease at once: for PGlite, whose data directory one process alone can open. */
  async releaseAllLeases(): Promise<void> {
    await this.db.query("UPDATE operations SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL");
  }

  /** Nonces held by unfinished operations of `from` below `below`, lowest first. */
  async unfinishedNoncesBelow(chainId: string, from: string, below: number): Promise<number[]> {
    const { rows } = await this.db.query<{ nonce: string }>(
      `SELECT nonce::text AS nonce FROM operations
       WHERE chain_id = $1 AND from_address = $2 AND status IN ('queued', 'sent') AND nonce < $3
       ORDER BY nonce`,
      [chainId, from, below],
    );
    return rows.map((row) => Number(row.nonce));
  }

  /** The highest nonce an unfinished operation of `from` holds, if any. */
  async highestUnfinishedNonce(chainId: string, from: string): Promise<number | null> {
    const { rows } = await this.db.query<{ nonce: string | null }>(
      `SELECT max(nonce)::text AS nonce FROM operations
       WHERE chain_id = $1 AND from_address = $2 AND status IN ('queued', 'sent')`,
      [chainId, from],
    );
    return rows[0]?.nonce == null ? null : Number(rows[0].nonce);
  }
}

const json = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);
const numberOrNull = (value: string | null) => (value === null ? null : Number(value));

function toOperation(row: OperationRow): Operation {
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
    accessKeyId: row.access_key_id,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
