import { randomBytes } from "node:crypto";
import type { SqlExecutor } from "../db";
import type { AccessPrincipal } from "./principal";
import type { Scope } from "./scopes";

/** An access key as listed: never its secret. */
export interface AccessKeyRecord {
  id: string;
  name: string;
  scopes: Scope[];
  wallets: string[] | null;
  collections: string[] | null;
  expiresAt: Date | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** The key that made this one; null for the root key. */
  createdBy: string | null;
}

interface KeyRow {
  id: string;
  name: string;
  scopes: Scope[] | string;
  wallets: string[] | string | null;
  collections: string[] | string | null;
  expires_at: Date | string | null;
  created_at: Date | string;
  last_used_at: Date | string | null;
  created_by: string | null;
}

const COLUMNS = "id, name, scopes, wallets, collections, expires_at, created_at, last_used_at, created_by";

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
      `INSERT INTO access_keys (id, name, secret_hash, scopes, wallets, collections, expires_at, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [
        id,
        key.name,
        secretHash,
        JSON.stringify(key.scopes),
        key.wallets === null ? null : JSON.stringify(key.wallets),
        key.collections === null ? null : JSON.stringify(key.collections),
        key.expiresAt,
        key.createdBy,
      ],
    );
    return toRecord(rows[0]);
  }

  /** Live keys, newest first. */
  async list(): Promise<AccessKeyRecord[]> {
    const { rows } = await this.db.query<KeyRow>(
      `SELECT ${COLUMNS} FROM access_keys WHERE revoked_at IS NULL ORDER BY created_at DESC, id`,
    );
    return rows.map(toRecord);
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

  /** Revokes a live key; false when there is none with that id. */
  async revoke(tx: SqlExecutor, id: string): Promise<boolean> {
    const { rowCount } = await tx.query(
      "UPDATE access_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
      [id],
    );
    return rowCount > 0;
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
    expiresAt: key.expiresAt,
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
    expiresAt: date(row.expires_at),
    createdAt: date(row.created_at)!,
    lastUsedAt: date(row.last_used_at),
    createdBy: row.created_by,
  };
}
