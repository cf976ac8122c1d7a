import { isUniqueViolation, type SqlExecutor } from "../db";
import { POSITION_AT, timestampOf, type PageRequest, type Position } from "../http/paging";
import type { Sealed } from "./master-key";

export type WalletKind = "local" | "pkcs11";

/** A wallet as the store has it: a local key only ever sealed, a pkcs11 key only ever named. */
export interface WalletRecord {
  /** Checksummed. */
  address: string;
  label: string;
  kind: WalletKind;
  /** A local wallet's private key, sealed under the master key. */
  sealedKey: Sealed | null;
  /** A pkcs11 wallet's key: CKA_LABEL in the token. */
  keyLabel: string | null;
  /** The policy of each chain that has one of its own (by decimal chain id), and `*`'s: every other chain's. */
  policies: Record<string, StoredPolicy>;
  createdAt: Date;
  updatedAt: Date;
}

export interface NewWallet {
  address: string;
  label: string;
  kind: WalletKind;
  sealedKey?: Sealed;
  keyLabel?: string;
}

/** One row of wallet_policies: a chain's own fields (null: `*`'s applies), and its low-balance crossing state. */
export interface StoredPolicy {
  dailySpendLimit: bigint | null;
  lowBalance: bigint | null;
  belowLowBalance: boolean;
}

/** The policy a wallet has on a chain: the chain's own fields, else `*`'s (API.md, "Chains"). */
export function policyOn(wallet: Pick<WalletRecord, "policies">, chainId: string): StoredPolicy {
  const own = wallet.policies[chainId];
  const every = wallet.policies["*"];
  return {
    dailySpendLimit: own?.dailySpendLimit ?? every?.dailySpendLimit ?? null,
    lowBalance: own?.lowBalance ?? every?.lowBalance ?? null,
    belowLowBalance: own?.belowLowBalance ?? false,
  };
}

/** The policy fields PATCH /wallets/{address} may change (null clears a limit), on `chain` (`*` unless given). */
export interface WalletChanges {
  label?: string;
  dailySpendLimit?: bigint | null;
  lowBalance?: bigint | null;
  /** A decimal chain id, or `*` (the default): every chain without a policy of its own. */
  chain?: string;
  /** More chains' policies at once (PATCH's `policy` object), by decimal chain id or `*`. */
  policies?: Record<string, { dailySpendLimit?: bigint | null; lowBalance?: bigint | null }>;
}

/** A wallet for that address, or with that label, is already held. */
export class WalletExists extends Error {
  constructor(readonly field: "address" | "label") {
    super(field === "address" ? "A wallet for this address is already held" : "A wallet has this label already");
  }
}

interface WalletRow {
  address: string;
  label: string;
  kind: WalletKind;
  key_ciphertext: Uint8Array | null;
  key_nonce: Uint8Array | null;
  key_tag: Uint8Array | null;
  pkcs11_key_label: string | null;
  policies: Record<string, { dailySpendLimit: string | null; lowBalance: string | null; below: boolean }> | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = `address, label, kind, key_ciphertext, key_nonce, key_tag, pkcs11_key_label,
  (SELECT jsonb_object_agg(p.chain_id, jsonb_build_object('dailySpendLimit', p.daily_spend_limit::text,
     'lowBalance', p.low_balance::text, 'below', p.below_low_balance))
   FROM wallet_policies p WHERE p.address = wallets.address) AS policies,
  created_at, updated_at`;

/** The wallets table and its companions (the master key's check value, the daily spend). */
export class WalletStore {
  constructor(private readonly db: SqlExecutor) {}

  async insert(tx: SqlExecutor, wallet: NewWallet): Promise<WalletRecord> {
    try {
      const { rows } = await tx.query<WalletRow>(
        `INSERT INTO wallets (address, label, kind, key_ciphertext, key_nonce, key_tag, pkcs11_key_label)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
        [
          wallet.address,
          wallet.label,
          wallet.kind,
          wallet.sealedKey?.ciphertext ?? null,
          wallet.sealedKey?.nonce ?? null,
          wallet.sealedKey?.tag ?? null,
          wallet.keyLabel ?? null,
        ],
      );
      return toRecord(rows[0]);
    } catch (err) {
      if (isUniqueViolation(err)) throw new WalletExists(uniqueField(err));
      throw err;
    }
  }

  /** By checksummed address. */
  async find(address: string, db: SqlExecutor = this.db): Promise<WalletRecord | null> {
    const { rows } = await db.query<WalletRow>(`SELECT ${COLUMNS} FROM wallets WHERE address = $1`, [address]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async findByLabel(label: string): Promise<WalletRecord | null> {
    const { rows } = await this.db.query<WalletRow>(`SELECT ${COLUMNS} FROM wallets WHERE label = $1`, [label]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * A page of the wallets, oldest first: all of them (`within` null) or those at the addresses
   * `within` lists (lower case).
   */
  async page(
    within: readonly string[] | null,
    page: PageRequest,
  ): Promise<Array<WalletRecord & { position: Position }>> {
    const { rows } = await this.db.query<WalletRow & { position_at: string }>(
      `SELECT ${COLUMNS}, ${POSITION_AT} AS position_at FROM wallets
       WHERE ($1::jsonb IS NULL OR $1::jsonb ? lower(address))
         AND ($2::text IS NULL OR (created_at, address) > (${timestampOf("$2")}, $3::text))
       ORDER BY created_at, address LIMIT $4`,
      [within ? JSON.stringify(within) : null, page.after?.at ?? null, page.after?.id ?? null, page.limit + 1],
    );
    return rows.map((row) => ({ ...toRecord(row), position: { at: row.position_at, id: row.address } }));
  }

  /** Applies `changes`; a new lowBalance re-arms the low-balance event. Null when no such wallet. */
  async update(tx: SqlExecutor, address: string, changes: WalletChanges): Promise<WalletRecord | null> {
    const params: unknown[] = [address];
    const sets: string[] = [];
    const set = (column: string, value: unknown, cast = "") => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (changes.label !== undefined) set("label", changes.label);
    const policies = { ...changes.policies };
    if (changes.dailySpendLimit !== undefined || changes.lowBalance !== undefined)
      policies[changes.chain ?? "*"] = { dailySpendLimit: changes.dailySpendLimit, lowBalance: changes.lowBalance };
    for (const [chain, policy] of Object.entries(policies)) await this.setPolicy(tx, address, chain, policy);
    try {
      const { rows } = await tx.query<WalletRow>(
        `UPDATE wallets SET ${[...sets, "updated_at = now()"].join(", ")} WHERE address = $1 RETURNING ${COLUMNS}`,
        params,
      );
      return rows[0] ? toRecord(rows[0]) : null;
    } catch (err) {
      if (isUniqueViolation(err)) throw new WalletExists("label");
      throw err;
    }
  }

  /**
   * Sets a chain's policy fields (those given; null clears one). A new lowBalance re-arms the
   * low-balance event: on that chain, or on every chain for `*`.
   */
  private async setPolicy(
    tx: SqlExecutor,
    address: string,
    chain: string,
    policy: { dailySpendLimit?: bigint | null; lowBalance?: bigint | null },
  ): Promise<void> {
    const limit = policy.dailySpendLimit;
    const low = policy.lowBalance;
    await tx.query(
      `INSERT INTO wallet_policies (address, chain_id, daily_spend_limit, low_balance)
       SELECT $1, $2, $4::numeric, $6::numeric WHERE EXISTS (SELECT 1 FROM wallets WHERE address = $1)
       ON CONFLICT (address, chain_id) DO UPDATE SET
         daily_spend_limit = CASE WHEN $3 THEN EXCLUDED.daily_spend_limit ELSE wallet_policies.daily_spend_limit END,
         low_balance = CASE WHEN $5 THEN EXCLUDED.low_balance ELSE wallet_policies.low_balance END,
         below_low_balance = CASE WHEN $5 THEN false ELSE wallet_policies.below_low_balance END,
         updated_at = now()`,
      [
        address,
        chain,
        limit !== undefined,
        decimalOrNull(limit ?? null),
        low !== undefined,
        decimalOrNull(low ?? null),
      ],
    );
    if (low !== undefined && chain === "*")
      await tx.query("UPDATE wallet_policies SET below_low_balance = false WHERE address = $1", [address]);
  }

  /** Locks the wallet's row for the rest of `tx` (a deletion checks its operations under it). */
  async lock(tx: SqlExecutor, address: string): Promise<WalletRecord | null> {
    const { rows } = await tx.query<WalletRow>(`SELECT ${COLUMNS} FROM wallets WHERE address = $1 FOR UPDATE`, [
      address,
    ]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Removes the wallet and its sealed key (its spend rows go with it). */
  async delete(tx: SqlExecutor, address: string): Promise<boolean> {
    const { rowCount } = await tx.query("DELETE FROM wallets WHERE address = $1", [address]);
    return rowCount > 0;
  }

  async countLocal(db: SqlExecutor = this.db): Promise<number> {
    const { rows } = await db.query<{ n: string }>("SELECT count(*)::text AS n FROM wallets WHERE kind = 'local'");
    return Number(rows[0].n);
  }

  /** Every local wallet, locked for the rest of `tx`: what a master key rotation re-seals. */
  async lockLocal(tx: SqlExecutor): Promise<WalletRecord[]> {
    const { rows } = await tx.query<WalletRow>(
      `SELECT ${COLUMNS} FROM wallets WHERE kind = 'local' ORDER BY address FOR UPDATE`,
    );
    return rows.map(toRecord);
  }

  async reseal(tx: SqlExecutor, address: string, sealed: Sealed): Promise<void> {
    await tx.query(
      "UPDATE wallets SET key_ciphertext = $2, key_nonce = $3, key_tag = $4, updated_at = now() WHERE address = $1",
      [address, sealed.ciphertext, sealed.nonce, sealed.tag],
    );
  }

  /** The master key's check value; `lock` holds its row for the rest of `tx` (no rotation meanwhile). */
  async keyCheck(db: SqlExecutor = this.db, lock: "share" | "update" | false = false): Promise<Sealed | null> {
    const { rows } = await db.query<{ check_ciphertext: Uint8Array; check_nonce: Uint8Array; check_tag: Uint8Array }>(
      `SELECT check_ciphertext, check_nonce, check_tag FROM wallet_master_key${lock ? ` FOR ${lock.toUpperCase()}` : ""}`,
    );
    const row = rows[0];
    return row
      ? {
          ciphertext: Buffer.from(row.check_ciphertext),
          nonce: Buffer.from(row.check_nonce),
          tag: Buffer.from(row.check_tag),
        }
      : null;
  }

  async putKeyCheck(db: SqlExecutor, check: Sealed): Promise<void> {
    await db.query(
      `INSERT INTO wallet_master_key (singleton, check_ciphertext, check_nonce, check_tag) VALUES (true, $1, $2, $3)
       ON CONFLICT (singleton) DO UPDATE SET check_ciphertext = $1, check_nonce = $2, check_tag = $3, updated_at = now()`,
      [check.ciphertext, check.nonce, check.tag],
    );
  }

  /**
   * Adds `amount` to the wallet's spend of `day` if the total stays within `limit`. Each statement
   * is atomic against concurrent ones (the row is locked and the condition re-checked), so writes
   * on any number of instances never pass the limit together. False when it would pass.
   */
  async reserveSpend(address: string, chainId: string, day: string, amount: bigint, limit: bigint): Promise<boolean> {
    const params = [address, day, amount.toString(), limit.toString(), chainId];
    const add = () =>
      this.db.query(
        `UPDATE wallet_spend SET spent = spent + $3::numeric
         WHERE address = $1 AND chain_id = $5 AND day = $2::date AND spent + $3::numeric <= $4::numeric RETURNING 1`,
        params,
      );
    if ((await add()).rowCount > 0) return true;
    // No row yet today (or the limit is reached): the day's first reservation makes the row.
    const first = await this.db.query(
      `INSERT INTO wallet_spend (address, chain_id, day, spent)
       SELECT $1, $5, $2::date, $3::numeric WHERE $3::numeric <= $4::numeric
       ON CONFLICT (address, chain_id, day) DO NOTHING RETURNING 1`,
      params,
    );
    if (first.rowCount > 0) return true;
    // Another write made the row meanwhile, or the limit is reached: the update decides.
    return (await add()).rowCount > 0;
  }

  /** Gives back a reservation whose write sent nothing. */
  async releaseSpend(address: string, chainId: string, day: string, amount: bigint): Promise<void> {
    await this.db.query(
      `UPDATE wallet_spend SET spent = greatest(spent - $3::numeric, 0)
       WHERE address = $1 AND chain_id = $4 AND day = $2::date`,
      [address, day, amount.toString(), chainId],
    );
  }

  /** What each of `addresses` has reserved on `day` on chain `chainId`. */
  async spentOn(addresses: string[], chainId: string, day: string): Promise<Map<string, bigint>> {
    const { rows } = await this.db.query<{ address: string; spent: string }>(
      `SELECT address, spent::text AS spent FROM wallet_spend
       WHERE address = ANY($1) AND chain_id = $3 AND day = $2::date`,
      [addresses, day, chainId],
    );
    return new Map(rows.map((row) => [row.address, BigInt(row.spent)]));
  }

  /** Unfinished operations of each of `addresses` on `chainId`: how many, and the highest nonce they hold. */
  async unfinished(
    chainId: string,
    addresses: string[],
    db: SqlExecutor = this.db,
  ): Promise<Map<string, { count: number; highestNonce: number | null }>> {
    const { rows } = await db.query<{ from_address: string; n: string; highest: string | null }>(
      `SELECT from_address, count(*)::text AS n, max(nonce)::text AS highest FROM operations
       WHERE chain_id = $1 AND from_address = ANY($2) AND status IN ('queued', 'sent')
       GROUP BY from_address`,
      [chainId, addresses],
    );
    return new Map(
      rows.map((row) => [
        row.from_address,
        { count: Number(row.n), highestNonce: row.highest === null ? null : Number(row.highest) },
      ]),
    );
  }

  /** Ids of the wallet's unfinished operations, oldest first, at most `limit`. */
  async unfinishedIds(chainId: string, address: string, limit: number): Promise<string[]> {
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT id FROM operations WHERE chain_id = $1 AND from_address = $2 AND status IN ('queued', 'sent')
       ORDER BY created_at, id LIMIT $3`,
      [chainId, address, limit],
    );
    return rows.map((row) => row.id);
  }
}

function decimalOrNull(value: bigint | null): string | null {
  return value === null ? null : value.toString();
}

function uniqueField(err: unknown): "address" | "label" {
  const constraint = (err as { constraint?: string }).constraint ?? "";
  return constraint.includes("label") ? "label" : "address";
}

const bytes = (value: Uint8Array | null) => (value === null ? null : Buffer.from(value));

function toRecord(row: WalletRow): WalletRecord {
  const ciphertext = bytes(row.key_ciphertext);
  const nonce = bytes(row.key_nonce);
  const tag = bytes(row.key_tag);
  return {
    address: row.address,
    label: row.label,
    kind: row.kind,
    sealedKey: ciphertext && nonce && tag ? { ciphertext, nonce, tag } : null,
    keyLabel: row.pkcs11_key_label,
    policies: Object.fromEntries(
      Object.entries(row.policies ?? {}).map(([chain, p]) => [
        chain,
        {
          dailySpendLimit: p.dailySpendLimit === null ? null : BigInt(p.dailySpendLimit),
          lowBalance: p.lowBalance === null ? null : BigInt(p.lowBalance),
          belowLowBalance: p.below,
        },
      ]),
    ),
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
