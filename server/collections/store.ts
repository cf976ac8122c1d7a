import { copyText, isUniqueViolation, type SqlDriver, type SqlExecutor } from "../db";
import type { BlockHeader } from "../chain/block-feed";
import { REORG_REACH } from "../chain/store-binding";
import { insertDropLogs, removeDropLogsAbove, type DropLog } from "./drop-events";
import {
  finalMetadataUpdates,
  insertMetadataUpdates,
  removeMetadataUpdatesAbove,
  type MetadataUpdateLog,
  type MetadataUpdatesFinalHook,
} from "./metadata-events";
import { insertNewRows, type RowTable } from "./log-rows";
import type { EditionTransferLog } from "./edition-events";
import {
  EditionStatistics,
  applyEditionHoldings,
  finalEditionTransfers,
  insertEditionTransfers,
  removeEditionTransfersAbove,
} from "./edition-store";

/** What a collection address holds: an ERC-721 collection, or ERC-1155 editions (ChainClient.standardOf). */
export type CollectionStandard = "erc721" | "erc1155";

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/** The columns a range's rows are written to, by COPY and by its ON CONFLICT fallback alike (same order). */
/** ERC-721 transfers, keyed by (collection, block, log). */
const TRANSFERS: RowTable = {
  name: "index_transfers",
  columns: [
    ["collection_id", "int"],
    ["block_number", "bigint"],
    ["log_index", "int"],
    ["block_hash", "text"],
    ["transaction_hash", "text"],
    ["from_address", "text"],
    ["to_address", "text"],
    ["token_id", "numeric"],
  ],
  keyColumns: 3,
};
const TOKEN_COLUMNS = ["collection_id", "token_id", "owner", "minted_block"];

/** Who registered a collection: the service deployed it, an /nft request named it, POST /collections, or the configuration. */
export type RegisteredBy = "deploy" | "request" | "api" | "config";

export interface CollectionRecord {
  id: number;
  chainId: string;
  /** Lower-case. */
  address: string;
  deployedBlock: number | null;
  /** The block the index reflects; null until the deployment block is known. */
  indexedBlock: number | null;
  /** Transfers up to this block are CONFIRMATIONS deep and were handed to the transfers-final hooks. */
  finalBlock: number | null;
  name: string | null;
  symbol: string | null;
  supply: bigint;
  holders: bigint;
  registeredBy: RegisteredBy;
  /** Read once by ERC-165 and kept; null until then. */
  standard: CollectionStandard | null;
}

/** One Transfer log of an indexed collection. Addresses lower-case, the token id a decimal string. */
export interface TransferLog {
  collectionId: number;
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  transactionHash: string;
  from: string;
  to: string;
  tokenId: string;
}

/** A transfer as the transfers-final hooks receive it. */
export interface IndexedTransfer extends Omit<TransferLog, "collectionId"> {
  chainId: string;
  /** The collection's address, lower-case. */
  collection: string;
  /** An edition's move (ERC-1155): the amount of `tokenId` moved, a decimal string; unset for an ERC-721 transfer. */
  amount?: string;
}

/**
 * Called inside the database transaction that makes transfers CONFIRMATIONS deep (a block range
 * applied, or the head moving on): whatever it writes on `tx` commits or rolls back with the index.
 * `transfers()` reads them (once, however many hooks call it), in chain order; a hook with nothing
 * to do (no webhook endpoint takes them) does not call it, and they are not read: the last blocks
 * of a first backfill are tens of thousands. Only news is handed over: transfers made final after
 * the index first followed the collection's head, however they were read (a catch-up after an
 * outage reads as a backfill); never the history read when a collection is first indexed (a
 * backfill of 100,000 logs would read them all back for nothing). Each is handed over once, unless
 * a reorg deeper than CONFIRMATIONS removes it (a transfer of the new branch is then handed over
 * when it is final in its turn).
 */
export type TransfersFinalHook = (tx: SqlExecutor, transfers: () => Promise<IndexedTransfer[]>) => Promise<void>;

/** A stored block hash differs from the chain's: the index must roll back before it reads on. */
export class ReorgDetected extends Error {
  constructor(readonly blockNumber: number) {
    super(`block ${blockNumber} changed under the index`);
    this.name = "ReorgDetected";
  }
}

export interface ApplyBatch {
  chainId: string;
  /** This process's name on leases: only collections it holds are applied. */
  owner: string;
  /** Each collection and the block its index is at now (its logs start after it). */
  collections: Array<{ id: number; indexedBlock: number }>;
  /** The last block of the range: every collection's index reflects it afterwards. */
  to: number;
  /** The range's blocks (near the head), linked to what is stored; unset for a backfill range far below the head. */
  blocks?: BlockHeader[];
  /** The range's Transfer logs, in chain order; each after its collection's indexedBlock. */
  logs: TransferLog[];
  /** The range's ERC-1155 moves (one per id of a TransferSingle or TransferBatch), likewise; none when unset. */
  editions?: EditionTransferLog[];
  /** The range's drop events (AllowlistMinted, VoucherRedeemed), likewise; none when unset. */
  drops?: DropLog[];
  /** The range's ERC-4906 events, likewise; none when unset. */
  metadata?: MetadataUpdateLog[];
  /** Transfers up to here are CONFIRMATIONS deep. */
  finalTo: number;
  hooks: TransfersFinalHook[];
  /** Run with the ERC-4906 events that become final, in the same transaction. */
  metadataHooks?: MetadataUpdatesFinalHook[];
}

export interface ApplyResult {
  /** Collections applied (now at `to`). */
  applied: number[];
  /** Collections not applied: their index was not where the batch expected it (or the lease is gone). */
  stale: Array<{ id: number; indexedBlock: number | null; leased: boolean }>;
  /** Logs stored (a log already there is not stored again). */
  stored: number;
}

/** Block hashes kept below the newest applied block: deeper reorgs than this are not undone. */
export const KEPT_BLOCK_HASHES = REORG_REACH;

interface CollectionRow {
  id: number;
  chain_id: string;
  address: string;
  deployed_block: string | null;
  indexed_block: string | null;
  final_block: string | null;
  name: string | null;
  symbol: string | null;
  supply: string;
  holders: string;
  registered_by: RegisteredBy;
  standard: CollectionStandard | null;
}

const COLLECTION_COLUMNS = `id, chain_id, address, deployed_block::text AS deployed_block,
  indexed_block::text AS indexed_block, final_block::text AS final_block, name, symbol,
  supply::text AS supply, holders::text AS holders, registered_by, standard`;

const numberOrNull = (value: string | null) => (value === null ? null : Number(value));

function toRecord(row: CollectionRow): CollectionRecord {
  return {
    id: Number(row.id),
    chainId: row.chain_id,
    address: row.address,
    deployedBlock: numberOrNull(row.deployed_block),
    indexedBlock: numberOrNull(row.indexed_block),
    finalBlock: numberOrNull(row.final_block),
    name: row.name,
    symbol: row.symbol,
    supply: BigInt(row.supply),
    holders: BigInt(row.holders),
    registeredBy: row.registered_by,
    standard: row.standard,
  };
}

/**
 * The collections index in SQL (PGlite or PostgreSQL): which collections are followed and where
 * each stands, their Transfer logs, each token's owner and each holder's count, and the recent
 * block hashes the index read. Every change lands in one transaction with the index positions it
 * moves, so a reader sees a whole block range or none of it.
 */
export class CollectionStore {
  private readonly editionStatistics = new EditionStatistics();

  constructor(readonly db: SqlDriver) {}

  /** Registers `address` (lower-case); an existing registration is answered as it is (`created: false`). */
  async register(
    chainId: string,
    address: string,
    by: RegisteredBy,
    deployedBlock?: number,
  ): Promise<{ record: CollectionRecord; created: boolean }> {
    const start = deployedBlock ?? null;
    const { rows } = await this.db.query<CollectionRow>(
      `INSERT INTO indexed_collections (chain_id, address, deployed_block, indexed_block, final_block, registered_by)
       VALUES ($1, $2, $3::bigint, $3::bigint - 1, $3::bigint - 1, $4)
       ON CONFLICT (chain_id, address) DO NOTHING
       RETURNING ${COLLECTION_COLUMNS}`,
      [chainId, address, start, by],
    );
    if (rows.length > 0) return { record: toRecord(rows[0]), created: true };
    if (start !== null) {
      // Known, but not where it starts (an /nft request named it first): the given block wins.
      await this.db.query(
        `UPDATE indexed_collections SET deployed_block = $3::bigint, indexed_block = $3::bigint - 1,
           final_block = $3::bigint - 1, updated_at = now()
         WHERE chain_id = $1 AND address = $2 AND deployed_block IS NULL`,
        [chainId, address, start],
      );
    }
    return { record: (await this.find(chainId, address))!, created: false };
  }

  /**
   * As `register` (by "api"), for an access key (`keyId`, "root" for the API_KEY): a collection new
   * to the index counts against the key's `max`; null, and nothing registered, once it has reached
   * it. One key's registrations are serialised, so concurrent ones cannot pass `max` together.
   */
  async registerByKey(
    chainId: string,
    address: string,
    keyId: string,
    max: number,
    deployedBlock?: number,
  ): Promise<{ record: CollectionRecord; created: boolean } | null> {
    if (await this.find(chainId, address)) return this.register(chainId, address, "api", deployedBlock);
    const start = deployedBlock ?? null;
    const inserted = await this.db.transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('collections per key'), hashtext($1))", [keyId]);
      const { rows: counted } = await tx.query<{ count: number }>(
        "SELECT count(*)::int AS count FROM indexed_collections WHERE registered_by_key = $1",
        [keyId],
      );
      if (Number(counted[0].count) >= max) return null;
      const { rows } = await tx.query<CollectionRow>(
        `INSERT INTO indexed_collections
           (chain_id, address, deployed_block, indexed_block, final_block, registered_by, registered_by_key)
         VALUES ($1, $2, $3::bigint, $3::bigint - 1, $3::bigint - 1, 'api', $4)
         ON CONFLICT (chain_id, address) DO NOTHING
         RETURNING ${COLLECTION_COLUMNS}`,
        [chainId, address, start, keyId],
      );
      return { row: rows[0] };
    });
    if (inserted === null) return null;
    if (inserted.row) return { record: toRecord(inserted.row), created: true };
    // Registered meanwhile by another request: answered as it is.
    return this.register(chainId, address, "api", deployedBlock);
  }

  async find(chainId: string, address: string, db: SqlExecutor = this.db): Promise<CollectionRecord | null> {
    const { rows } = await db.query<CollectionRow>(
      `SELECT ${COLLECTION_COLUMNS} FROM indexed_collections WHERE chain_id = $1 AND address = $2`,
      [chainId, address],
    );
    return rows.length > 0 ? toRecord(rows[0]) : null;
  }

  /** The block collection `id`'s index reflects (null while its start is not known). */
  async indexedBlock(id: number): Promise<number | null> {
    const { rows } = await this.db.query<{ indexed_block: string | null }>(
      "SELECT indexed_block::text AS indexed_block FROM indexed_collections WHERE id = $1",
      [id],
    );
    return numberOrNull(rows[0]?.indexed_block ?? null);
  }

  /**
   * Leases to `owner` the collections of the chain it holds already, those nobody holds, and those
   * whose holder's lease ran out; SKIP LOCKED keeps two processes from taking the same one.
   */
  async claim(chainId: string, owner: string, leaseMs: number, limit: number): Promise<CollectionRecord[]> {
    const { rows } = await this.db.query<CollectionRow>(
      `UPDATE indexed_collections SET lease_owner = $2, lease_until = now() + $3 * interval '1 millisecond'
       WHERE id IN (
         SELECT id FROM indexed_collections
         WHERE chain_id = $1 AND (lease_owner = $2 OR lease_until IS NULL OR lease_until < now())
         ORDER BY id
         LIMIT $4
         FOR UPDATE SKIP LOCKED)
       RETURNING ${COLLECTION_COLUMNS}`,
      [chainId, owner, leaseMs, limit],
    );
    return rows.map(toRecord);
  }

  /** Lets other processes take `owner`'s collections at once (a clean shutdown). */
  async release(owner: string): Promise<void> {
    await this.db.query(
      "UPDATE indexed_collections SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1",
      [owner],
    );
  }

  /** Every lease on chain `chainId` at once: for PGlite, whose data directory one process alone opens. */
  async releaseAll(chainId: string): Promise<void> {
    await this.db.query(
      "UPDATE indexed_collections SET lease_owner = NULL, lease_until = NULL WHERE chain_id = $1 AND lease_owner IS NOT NULL",
      [chainId],
    );
  }

  /** Where a collection starts, once found, and its name and symbol; its index then starts just before. */
  async setDeployment(id: number, deployedBlock: number, name: string | null, symbol: string | null): Promise<void> {
    await this.db.query(
      `UPDATE indexed_collections SET deployed_block = COALESCE(deployed_block, $2::bigint),
         indexed_block = COALESCE(indexed_block, COALESCE(deployed_block, $2::bigint) - 1),
         final_block = COALESCE(final_block, COALESCE(deployed_block, $2::bigint) - 1),
         name = COALESCE(name, $3), symbol = COALESCE(symbol, $4), updated_at = now()
       WHERE id = $1`,
      [id, deployedBlock, name, symbol],
    );
  }

  /** A collection's standard, as ChainClient.standardOf read it. */
  async setStandard(id: number, standard: CollectionStandard): Promise<void> {
    await this.db.query("UPDATE indexed_collections SET standard = $2, updated_at = now() WHERE id = $1", [
      id,
      standard,
    ]);
  }

  /** Whether the index holds an ERC-1155 move of collection `id`. */
  async holdsEditions(id: number): Promise<boolean> {
    const { rows } = await this.db.query("SELECT 1 FROM index_editions WHERE collection_id = $1 LIMIT 1", [id]);
    return rows.length > 0;
  }

  /** A collection's name and symbol, where the index has none yet. */
  async setMetadata(id: number, name: string | null, symbol: string | null): Promise<void> {
    await this.db.query(
      "UPDATE indexed_collections SET name = COALESCE(name, $2), symbol = COALESCE(symbol, $3), updated_at = now() WHERE id = $1",
      [id, name, symbol],
    );
  }

  /** The stored hashes of blocks `from`..`to`, by number. */
  async blockHashes(chainId: string, from: number, to: number): Promise<Map<number, string>> {
    const { rows } = await this.db.query<{ number: string; hash: string }>(
      "SELECT number::text AS number, hash FROM index_blocks WHERE chain_id = $1 AND number BETWEEN $2 AND $3",
      [chainId, from, to],
    );
    return new Map(rows.map((row) => [Number(row.number), row.hash]));
  }

  /**
   * Applies a block range to the collections in `batch`, in one transaction: the logs and drop
   * events, each token's owner, each holder's count, the collections' counters and positions, the
   * range's block hashes, and the hooks of the transfers it makes final. Throws ReorgDetected (and changes nothing) when a
   * block of the range does not match or link to what is stored.
   */
  async apply(batch: ApplyBatch): Promise<ApplyResult> {
    let moved = 0;
    const result = await this.db.transaction(async (tx) => {
      const ids = batch.collections.map((c) => c.id);
      const { rows } = await tx.query<{
        id: number;
        indexed_block: string | null;
        final_block: string | null;
        lease_owner: string | null;
      }>(
        `SELECT id, indexed_block::text AS indexed_block, final_block::text AS final_block, lease_owner
         FROM indexed_collections
         WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE`,
        [ids],
      );
      const now = new Map(rows.map((row) => [Number(row.id), row]));
      const applied = new Set<number>();
      const stale: ApplyResult["stale"] = [];
      for (const { id, indexedBlock } of batch.collections) {
        const row = now.get(id);
        const at = numberOrNull(row?.indexed_block ?? null);
        if (row && row.lease_owner === batch.owner && at === indexedBlock) applied.add(id);
        else stale.push({ id, indexedBlock: at, leased: row?.lease_owner === batch.owner });
      }
      if (applied.size === 0) return { applied: [], stale, stored: 0 };
      if (batch.blocks && batch.blocks.length > 0) await this.storeBlocks(tx, batch.chainId, batch.blocks);

      const logs = batch.logs.filter((log) => applied.has(log.collectionId));
      const stored = await this.insertTransfers(tx, logs);
      const { supply, holders } = await this.applyOwnership(tx, stored);
      const moves = await insertEditionTransfers(
        tx,
        (batch.editions ?? []).filter((log) => applied.has(log.collectionId)),
      );
      const editionCounts = await applyEditionHoldings(tx, moves);
      for (const [id, change] of editionCounts.supply) supply.set(id, (supply.get(id) ?? 0n) + change);
      for (const [id, change] of editionCounts.holders) holders.set(id, (holders.get(id) ?? 0n) + change);
      await insertDropLogs(
        tx,
        (batch.drops ?? []).filter((log) => applied.has(log.collectionId)),
      );
      // A range near the head (with its blocks): news begins where the collection was final before
      // the first of them, and stays there (migration 11).
      await tx.query(
        `UPDATE indexed_collections c SET indexed_block = $2::bigint,
           final_block = GREATEST(c.final_block, LEAST($2::bigint, $3::bigint)),
           news_from = CASE WHEN $4::boolean THEN COALESCE(c.news_from, c.final_block, -1) ELSE c.news_from END,
           supply = c.supply + x.supply, holders = c.holders + x.holders, updated_at = now()
         FROM json_to_recordset($1::json) AS x(id int, supply numeric, holders bigint)
         WHERE c.id = x.id`,
        [JSON.stringify(counters(applied, supply, holders)), batch.to, batch.finalTo, batch.blocks !== undefined],
      );
      const finalFrom = new Map([...applied].map((id) => [id, numberOrNull(now.get(id)!.final_block) ?? -1]));
      await insertMetadataUpdates(
        tx,
        (batch.metadata ?? []).filter((log) => applied.has(log.collectionId)),
      );
      if (batch.hooks.length > 0) await this.runFinalHooks(tx, batch, finalFrom);
      if (batch.metadataHooks && batch.metadataHooks.length > 0) {
        const ranges = [...finalFrom].filter(([, from]) => from < batch.finalTo).map(([id, after]) => ({ id, after }));
        const updates = ranges.length > 0 ? await finalMetadataUpdates(tx, batch.chainId, ranges, batch.finalTo) : [];
        if (updates.length > 0) for (const hook of batch.metadataHooks) await hook(tx, updates);
      }
      moved = moves.length;
      return { applied: [...applied], stale, stored: stored.length + moves.length };
    });
    if (moved > 0) await this.editionStatistics.grew(this.db, moved);
    return result;
  }

  /** Checks the range's blocks against the stored hashes (and the block before them), then stores them. */
  private async storeBlocks(tx: SqlExecutor, chainId: string, blocks: BlockHeader[]): Promise<void> {
    const first = blocks[0].number;
    const last = blocks[blocks.length - 1].number;
    const { rows } = await tx.query<{ number: string; hash: string }>(
      "SELECT number::text AS number, hash FROM index_blocks WHERE chain_id = $1 AND number BETWEEN $2 AND $3",
      [chainId, first - 1, last],
    );
    const stored = new Map(rows.map((row) => [Number(row.number), row.hash]));
    const parent = stored.get(first - 1);
    if (parent !== undefined && parent !== blocks[0].parentHash) throw new ReorgDetected(first - 1);
    for (const block of blocks) {
      const hash = stored.get(block.number);
      if (hash !== undefined && hash !== block.hash) throw new ReorgDetected(block.number);
    }
    await tx.query(
      `INSERT INTO index_blocks (chain_id, number, hash, parent_hash)
       SELECT $1, n, h, p FROM json_to_recordset($2::json) AS x(n bigint, h text, p text)
       ON CONFLICT (chain_id, number) DO NOTHING`,
      [chainId, JSON.stringify(blocks.map((b) => ({ n: b.number, h: b.hash, p: b.parentHash })))],
    );
    await tx.query("DELETE FROM index_blocks WHERE chain_id = $1 AND number < $2", [chainId, last - KEPT_BLOCK_HASHES]);
  }

  /**
   * Stores the logs not stored yet; answers those it stored, in chain order. No log above a
   * collection's position is stored (apply moves both in one transaction, a rollback deletes above
   * the fork), so they are copied in at once (COPY), under a savepoint: ON CONFLICT's check of each
   * row was a third of an INSERT, and COPY's rows cost less to send than one JSON parameter. A log
   * stored already (a node answering one twice) takes the careful way.
   */
  private insertTransfers(tx: SqlExecutor, logs: TransferLog[]): Promise<TransferLog[]> {
    return insertNewRows(tx, TRANSFERS, logs, (l) => [
      l.collectionId,
      l.blockNumber,
      l.logIndex,
      l.blockHash,
      l.transactionHash,
      l.from,
      l.to,
      l.tokenId,
    ]);
  }

  /** Moves each token to its new owner and each holder's count by what `logs` (in chain order) did. */
  private async applyOwnership(
    tx: SqlExecutor,
    logs: TransferLog[],
  ): Promise<{ supply: Map<number, bigint>; holders: Map<number, bigint> }> {
    const supply = new Map<number, bigint>();
    const holders = new Map<number, bigint>();
    if (logs.length === 0) return { supply, holders };
    const tokens = new Map<string, { c: number; t: string; o: string; m: number | null }>();
    const deltas = new Map<string, { c: number; o: string; d: number }>();
    const move = (c: number, owner: string, d: number) => {
      if (owner === ZERO_ADDRESS) return;
      const key = `${c}:${owner}`;
      const entry = deltas.get(key) ?? { c, o: owner, d: 0 };
      entry.d += d;
      deltas.set(key, entry);
    };
    // Tokens whose first log here is their mint: most likely new to the index (unless minted again after a burn).
    const firstMinted = new Set<string>();
    for (const log of logs) {
      const key = `${log.collectionId}:${log.tokenId}`;
      const minted = log.from === ZERO_ADDRESS ? log.blockNumber : null;
      const previous = tokens.get(key);
      if (!previous && minted !== null) firstMinted.add(key);
      tokens.set(key, { c: log.collectionId, t: log.tokenId, o: log.to, m: previous?.m ?? minted });
      move(log.collectionId, log.from, -1);
      move(log.collectionId, log.to, 1);
      const change = (log.from === ZERO_ADDRESS ? 1n : 0n) - (log.to === ZERO_ADDRESS ? 1n : 0n);
      if (change !== 0n) supply.set(log.collectionId, (supply.get(log.collectionId) ?? 0n) + change);
    }
    await this.storeOwners(tx, tokens, firstMinted);
    const changed = [...deltas.values()].filter((entry) => entry.d !== 0);
    if (changed.length === 0) return { supply, holders };
    const { rows } = await tx.query<{ c: number; tokens: string; inserted: boolean; d: string }>(
      `WITH x AS (SELECT c, o, d FROM json_to_recordset($1::json) AS x(c int, o text, d bigint))
       INSERT INTO index_holders (collection_id, owner, tokens) SELECT c, o, d FROM x
       ON CONFLICT (collection_id, owner) DO UPDATE SET tokens = index_holders.tokens + EXCLUDED.tokens
       RETURNING collection_id AS c, tokens::text AS tokens, (xmax = 0) AS inserted`,
      [JSON.stringify(changed)],
    );
    // A holder is new when its row was inserted with tokens, gone when an existing row fell to 0.
    for (const row of rows) {
      const count = BigInt(row.tokens);
      const change = row.inserted ? (count > 0n ? 1n : 0n) : count <= 0n ? -1n : 0n;
      if (change !== 0n) holders.set(Number(row.c), (holders.get(Number(row.c)) ?? 0n) + change);
    }
    await tx.query("DELETE FROM index_holders WHERE collection_id = ANY($1::int[]) AND tokens <= 0", [
      [...new Set(changed.map((entry) => entry.c))],
    ]);
    return { supply, holders };
  }

  /**
   * Writes each token's owner (and the block it was minted in, kept once known). The tokens minted
   * here are copied in (COPY) under a savepoint, as transfers are: ON CONFLICT's check of each row
   * cost about a third of the statement. A token minted again after a burn has its row already and
   * sends them all the careful way.
   */
  private async storeOwners(
    tx: SqlExecutor,
    tokens: Map<string, { c: number; t: string; o: string; m: number | null }>,
    firstMinted: Set<string>,
  ): Promise<void> {
    let rest = [...tokens.values()];
    if (firstMinted.size > 0) {
      const minted = [...firstMinted].map((key) => tokens.get(key)!);
      await tx.query("SAVEPOINT insert_tokens");
      try {
        await tx.copyFrom("index_tokens", TOKEN_COLUMNS, copyText(minted.map((row) => [row.c, row.t, row.o, row.m])));
        rest = [...tokens].filter(([key]) => !firstMinted.has(key)).map(([, row]) => row);
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        await tx.query("ROLLBACK TO SAVEPOINT insert_tokens");
      }
    }
    if (rest.length === 0) return;
    await tx.query(
      `INSERT INTO index_tokens (${TOKEN_COLUMNS.join(", ")})
       SELECT c, t, o, m FROM json_to_recordset($1::json) AS x(c int, t numeric, o text, m bigint)
       ON CONFLICT (collection_id, token_id) DO UPDATE
         SET owner = EXCLUDED.owner, minted_block = COALESCE(index_tokens.minted_block, EXCLUDED.minted_block)`,
      [JSON.stringify(rest)],
    );
  }

  /** Hands the transfers that became final in this batch to the hooks, on the batch's transaction. */
  private async runFinalHooks(tx: SqlExecutor, batch: ApplyBatch, finalFrom: Map<number, number>): Promise<void> {
    const ranges = [...finalFrom].filter(([, from]) => from < batch.finalTo);
    if (ranges.length === 0) return;
    let read: Promise<IndexedTransfer[]> | undefined;
    const transfers = () => (read ??= this.finalTransfers(tx, batch, ranges));
    for (const hook of batch.hooks) await hook(tx, transfers);
  }

  /** The news among the transfers of `ranges` (collection, final block before) up to the batch's finalTo. */
  private async finalTransfers(
    tx: SqlExecutor,
    batch: ApplyBatch,
    ranges: Array<[number, number]>,
  ): Promise<IndexedTransfer[]> {
    const { rows } = await tx.query<{
      address: string;
      block_number: string;
      log_index: number;
      block_hash: string;
      transaction_hash: string;
      from_address: string;
      to_address: string;
      token_id: string;
    }>(
      `SELECT c.address, t.block_number::text AS block_number, t.log_index, t.block_hash, t.transaction_hash,
         t.from_address, t.to_address, t.token_id::text AS token_id
       FROM json_to_recordset($1::json) AS r(id int, after bigint)
       JOIN indexed_collections c ON c.id = r.id AND c.news_from IS NOT NULL
       JOIN index_transfers t ON t.collection_id = r.id AND t.block_number > GREATEST(r.after, c.news_from)
         AND t.block_number <= $2
       ORDER BY t.block_number, t.log_index`,
      [JSON.stringify(ranges.map(([id, after]) => ({ id, after }))), batch.finalTo],
    );
    const transfers: IndexedTransfer[] = rows.map((row) => ({
      chainId: batch.chainId,
      collection: row.address,
      blockNumber: Number(row.block_number),
      blockHash: row.block_hash,
      logIndex: row.log_index,
      transactionHash: row.transaction_hash,
      from: row.from_address,
      to: row.to_address,
      tokenId: row.token_id,
    }));
    const moves = await finalEditionTransfers(tx, ranges, batch.finalTo);
    if (moves.length === 0) return transfers;
    // One per id of a batch, in chain order with the ERC-721 transfers (a sort, stable within a log).
    for (const move of moves)
      transfers.push({
        chainId: batch.chainId,
        collection: move.address,
        blockNumber: move.blockNumber,
        blockHash: move.blockHash,
        logIndex: move.logIndex,
        transactionHash: move.transactionHash,
        from: move.from,
        to: move.to,
        tokenId: move.tokenId,
        amount: move.amount,
      });
    return transfers.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  }

  /**
   * Undoes everything the index holds above block `fork`, for every collection of the chain, in
   * one transaction: their logs and drop events, the owners and counts those logs made, the stored
   * block hashes; every collection's position goes back to `fork` at most. The next reads follow the new branch.
   */
  async rollback(chainId: string, fork: number): Promise<{ removed: number }> {
    return this.db.transaction(async (tx) => {
      const { rows: collections } = await tx.query<{ id: number }>(
        "SELECT id FROM indexed_collections WHERE chain_id = $1 ORDER BY id FOR UPDATE",
        [chainId],
      );
      const ids = collections.map((row) => Number(row.id));
      const { rows: affected } = await tx.query<{ c: number; t: string }>(
        `WITH gone AS (
           DELETE FROM index_transfers WHERE collection_id = ANY($1::int[]) AND block_number > $2
           RETURNING collection_id, token_id)
         SELECT DISTINCT collection_id AS c, token_id::text AS t FROM gone`,
        [ids, fork],
      );
      if (affected.length > 0) {
        const tokens = JSON.stringify(affected.map((row) => ({ c: Number(row.c), t: row.t })));
        await tx.query(
          `DELETE FROM index_tokens k USING json_to_recordset($1::json) AS x(c int, t numeric)
           WHERE k.collection_id = x.c AND k.token_id = x.t`,
          [tokens],
        );
        await tx.query(
          `INSERT INTO index_tokens (collection_id, token_id, owner, minted_block)
           SELECT DISTINCT ON (tr.collection_id, tr.token_id) tr.collection_id, tr.token_id, tr.to_address,
             (SELECT min(m.block_number) FROM index_transfers m
              WHERE m.collection_id = tr.collection_id AND m.token_id = tr.token_id AND m.from_address = $2)
           FROM index_transfers tr
           JOIN json_to_recordset($1::json) AS x(c int, t numeric) ON tr.collection_id = x.c AND tr.token_id = x.t
           ORDER BY tr.collection_id, tr.token_id, tr.block_number DESC, tr.log_index DESC`,
          [tokens, ZERO_ADDRESS],
        );
        // Counts anew for the collections touched: reorgs are rare, and a recount cannot drift.
        for (const id of new Set(affected.map((row) => Number(row.c)))) await this.recount(tx, id);
      }
      const editions = await removeEditionTransfersAbove(tx, ids, fork);
      await removeDropLogsAbove(tx, ids, fork);
      await removeMetadataUpdatesAbove(tx, ids, fork);
      await tx.query(
        `UPDATE indexed_collections SET indexed_block = LEAST(indexed_block, $2::bigint),
           final_block = LEAST(final_block, $2::bigint),
           updated_at = now()
         WHERE chain_id = $1`,
        [chainId, fork],
      );
      await tx.query("DELETE FROM index_blocks WHERE chain_id = $1 AND number > $2", [chainId, fork]);
      return { removed: affected.length + editions };
    });
  }

  private async recount(tx: SqlExecutor, id: number): Promise<void> {
    await tx.query("DELETE FROM index_holders WHERE collection_id = $1", [id]);
    await tx.query(
      `INSERT INTO index_holders (collection_id, owner, tokens)
       SELECT collection_id, owner, count(*) FROM index_tokens WHERE collection_id = $1 AND owner <> $2
       GROUP BY collection_id, owner`,
      [id, ZERO_ADDRESS],
    );
    await tx.query(
      `UPDATE indexed_collections SET
         supply = (SELECT count(*) FROM index_tokens WHERE collection_id = $1 AND owner <> $2),
         holders = (SELECT count(*) FROM index_holders WHERE collection_id = $1)
       WHERE id = $1`,
      [id, ZERO_ADDRESS],
    );
  }

  /**
   * Runs reads against one consistent snapshot, so what they answer matches the collection's
   * indexedBlock read with them (REPEATABLE READ on PostgreSQL; PGlite runs one transaction at a time).
   */
  snapshot<T>(read: (db: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      if (this.db.backend === "postgres") await tx.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
      return read(tx);
    });
  }

  /** Holders, most tokens first (then by address), after the holder `after` of an earlier page. */
  async owners(
    db: SqlExecutor,
    id: number,
    limit: number,
    after?: { tokens: bigint; owner: string },
  ): Promise<Array<{ owner: string; tokens: bigint }>> {
    const { rows } = await db.query<{ owner: string; tokens: string }>(
      `SELECT owner, tokens::text AS tokens FROM index_holders
       WHERE collection_id = $1 AND ($3::bigint IS NULL OR tokens < $3 OR (tokens = $3 AND owner > $4))
       ORDER BY index_holders.tokens DESC, index_holders.owner
       LIMIT $2`,
      [id, limit, after?.tokens.toString() ?? null, after?.owner ?? null],
    );
    return rows.map((row) => ({ owner: row.owner, tokens: BigInt(row.tokens) }));
  }

  /** A token's owner now and the block it was minted in; null when the index has no transfer of it. */
  async token(
    db: SqlExecutor,
    id: number,
    tokenId: string,
  ): Promise<{ owner: string; mintedBlock: number | null } | null> {
    const { rows } = await db.query<{ owner: string; minted_block: string | null }>(
      "SELECT owner, minted_block::text AS minted_block FROM index_tokens WHERE collection_id = $1 AND token_id = $2",
      [id, tokenId],
    );
    return rows.length > 0 ? { owner: rows[0].owner, mintedBlock: numberOrNull(rows[0].minted_block) } : null;
  }

  /** A token's transfers, oldest first, after the (block, log index) `after` of an earlier page. */
  async tokenTransfers(
    db: SqlExecutor,
    id: number,
    tokenId: string,
    limit: number,
    after?: { blockNumber: number; logIndex: number },
  ): Promise<Array<Omit<TransferLog, "collectionId" | "tokenId">>> {
    const { rows } = await db.query<{
      block_number: string;
      log_index: number;
      block_hash: string;
      transaction_hash: string;
      from_address: string;
      to_address: string;
    }>(
      `SELECT block_number::text AS block_number, log_index, block_hash, transaction_hash, from_address, to_address
       FROM index_transfers
       WHERE collection_id = $1 AND token_id = $2
         AND ($4::bigint IS NULL OR (block_number, log_index) > ($4::bigint, $5::int))
       ORDER BY index_transfers.block_number, index_transfers.log_index
       LIMIT $3`,
      [id, tokenId, limit, after?.blockNumber ?? null, after?.logIndex ?? null],
    );
    return rows.map((row) => ({
      blockNumber: Number(row.block_number),
      logIndex: row.log_index,
      blockHash: row.block_hash,
      transactionHash: row.transaction_hash,
      from: row.from_address,
      to: row.to_address,
    }));
  }

  /** Ids of the tokens `owner` holds, ascending, after `afterTokenId`; all of them when `limit` is unset. */
  async wallet(db: SqlExecutor, id: number, owner: string, limit?: number, afterTokenId?: string): Promise<string[]> {
    const { rows } = await db.query<{ token_id: string }>(
      `SELECT token_id::text AS token_id FROM index_tokens
       WHERE collection_id = $1 AND owner = $2 AND ($3::numeric IS NULL OR token_id > $3::numeric)
       ORDER BY index_tokens.token_id
       ${limit === undefined ? "" : "LIMIT $4"}`,
      limit === undefined ? [id, owner, afterTokenId ?? null] : [id, owner, afterTokenId ?? null, limit],
    );
    return rows.map((row) => row.token_id);
  }

  /** How many tokens `owner` holds. */
  async balance(db: SqlExecutor, id: number, owner: string): Promise<bigint> {
    const { rows } = await db.query<{ tokens: string }>(
      "SELECT tokens::text AS tokens FROM index_holders WHERE collection_id = $1 AND owner = $2",
      [id, owner],
    );
    return rows.length > 0 ? BigInt(rows[0].tokens) : 0n;
  }
}

/** Each collection's counter changes, as rows for json_to_recordset. */
function counters(ids: Set<number>, supply: Map<number, bigint>, holders: Map<number, bigint>) {
  return [...ids].map((id) => ({
    id,
    supply: (supply.get(id) ?? 0n).toString(),
    holders: (holders.get(id) ?? 0n).toString(),
  }));
}
