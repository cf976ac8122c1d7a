import { randomBytes } from "node:crypto";
import type { SqlExecutor } from "../db";
import { POSITION_AT, timestampOf, type PageRequest, type Position } from "../http/paging";
import type { ApprovalRule } from "./approval-rule";
import type { AccessPrincipal } from "./principal";
import type { Scope } from "./scopes";

/** An access key as listed: never its secret. */
export interface AccessKeyRecord {
  id: string;
  name: string;
  scopes: Scope[];
  wallets: string[] | null;
  collections: string[] | null;
  /** Decimal chain ids; null = every chain. */
  chains: string[] | null;
  expiresAt: Date | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** The key that made this one; null for the root key. */
  createdBy: string | null;
  /** Writes of this key that wait for a person's decision; null = none. */
  approval: ApprovalRule | null;
}

interface KeyRow {
  id: string;
  name: string;
  scopes: Scope[] | string;
  wallets: string[] | string | null;
  collections: string[] | string | null;
  chains: string[] | string | null;
  expires_at: Date | string | null;
  created_at: Date | string;
  last_used_at: Date | string | null;
  created_by: string | null;
  approval?: ApprovalRule | string | null;
  position_at?: string;
}

/** The keys $1 made, and theirs in turn, revoked or not (a CTE for WITH RECURSIVE). */
const DESCENDANTS = `descendants(id) AS (
    SELECT id FROM access_keys WHERE created_by = $1
    UNION SELECT k.id FROM access_keys k JOIN descendants d ON k.created_by = d.id)`;

const COLUMNS =
  "id, name, scopes, wallets, collections, chains, expires_at, created_at, last_used_at, created_by, approval";

/** Access keys in the store (table access_keys): a SHA-256 of each secret, never the secret. */
export class AccessKeyStore {
  constructor(private readonly db: SqlExecutor) {}

  async insert(
    tx: SqlExecutor,
    key: Omit<AccessKeyRecord, "id" | "createdAt" | "lastUsedAt">,
    secretHash: string,
  ): Promise<AccessKeyRecord> {
    const id = `ak_${randomBytes(12).toString("hex")}`;
    const { rows } = await tx.query<KeyRow>(
      `INSERT INTO access_keys (id, name, secret_hash, scopes, wallets, collections, expires_at, created_by, chains, approval)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [
        id,
        key.name,
        secretHash,
        JSON.stringify(key.scopes),
        key.wallets === null ? null : JSON.stringify(key.wallets),
        key.collections === null ? null : JSON.stringify(key.collections),
        key.expiresAt,
        key.createdBy,
        key.chains === null ? null : JSON.stringify(key.chains),
        key.approval === null ? null : JSON.stringify(key.approval),
      ],
    );
    return toRecord(rows[0]);
  }

  /**
   * A page of live keys, newest first: every key (`under` null, the root key) or the keys `under`
   * made, and theirs in turn.
   */
  async list(under: string | null, page: PageRequest): Promise<Array<AccessKeyRecord & { position: Position }>> {
    const { rows } = await this.db.query<KeyRow>(
      `WITH RECURSIVE ${DESCENDANTS}
       SELECT ${COLUMNS}, ${POSITION_AT} AS position_at FROM access_keys
       WHERE revoked_at IS NULL AND ($1::text IS NULL OR id IN (SELECT id FROM descendants))
         AND ($2::text IS NULL OR (created_at, id) < (${timestampOf("$2")}, $3::text))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [under, page.after?.at ?? null, page.after?.id ?? null, page.limit + 1],
    );
    return rows.map((row) => ({ ...toRecord(row), position: { at: row.position_at!, id: row.id } }));
  }

  /** Whether `id` is a key `ancestor` made, or one made by such a key, and so on (revoked ones too). */
  async isDescendant(ancestor: string, id: string): Promise<boolean> {
    const { rows } = await this.db.query(`WITH RECURSIVE ${DESCENDANTS} SELECT 1 FROM descendants WHERE id = $2`, [
      ancestor,
      id,
    ]);
    return rows.length > 0;
  }

  /**
   * Locks the live key `id` against revocation until `tx` ends (a key made meanwhile by it is then
   * revoked with it); false when it is revoked or unknown.
   */
  async holdLive(tx: SqlExecutor, id: string): Promise<boolean> {
    const { rows } = await tx.query("SELECT 1 FROM access_keys WHERE id = $1 AND revoked_at IS NULL FOR SHARE", [id]);
    return rows.length > 0;
  }

  async find(id: string): Promise<AccessKeyRecord | null> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${COLUMNS} FROM access_keys WHERE id = $1 AND revoked_at IS NULL`,
      [id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** The live key with this secret hash, if any (expiry is the caller's to check). */
  async findBySecretHash(secretHash: string): Promise<AccessKeyRecord | null> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${COLUMNS} FROM access_keys WHERE secret_hash = $1 AND revoked_at IS NULL`,
      [secretHash],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * Revokes a live key and every key it made, and theirs in turn: the ids revoked, the key's first;
   * none when there is no live key with that id.
   */
  async revoke(tx: SqlExecutor, id: string): Promise<string[]> {
    const { rowCount } = await tx.query(
      "UPDATE access_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
      [id],
    );
    if (rowCount === 0) return [];
    // A second statement, so its snapshot holds any key made by one still being made when the first
    // ran (holdLive made that maker wait for it, then the first statement waited for the maker).
    const { rows } = await tx.query<{ id: string }>(
      `WITH RECURSIVE ${DESCENDANTS}
       UPDATE access_keys SET revoked_at = now()
       WHERE id IN (SELECT id FROM descendants) AND revoked_at IS NULL RETURNING id`,
      [id],
    );
    return [id, ...rows.map((row) => row.id)];
  }

  async touch(ids: string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query("UPDATE access_keys SET last_used_at = $1 WHERE id = ANY($2)", [at, ids]);
  }
}

export function principalOf(key: AccessKeyRecord): AccessPrincipal {
  return {
    keyId: key.id,
    name: key.name,
    scopes: new Set(key.scopes),
    wallets: key.wallets,
    collections: key.collections,
    chains: key.chains,
    expiresAt: key.expiresAt,
    approval: key.approval,
  };
}

const json = <T>(value: T | string): T => (typeof value === "string" ? (JSON.parse(value) as T) : value);
const date = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

function toRecord(row: KeyRow): AccessKeyRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: json(row.scopes),
    wallets: row.wallets === null ? null : json(row.wallets),
    collections: row.collections === null ? null : json(row.collections),
    chains: row.chains === null || row.chains === undefined ? null : json(row.chains),
    expiresAt: date(row.expires_at),
    createdAt: date(row.created_at)!,
    lastUsedAt: date(row.last_used_at),
    createdBy: row.created_by,
    approval: row.approval === null || row.approval === undefined ? null : json(row.approval),
  };
}
