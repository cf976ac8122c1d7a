/**
 * The editions index in SQL (migration 34): an ERC-1155's moves, each (edition, holder)'s balance,
 * each edition's supply and holders, each holder's total, written in the transaction of the range
 * that read them (CollectionStore.apply) and undone with it (CollectionStore.rollback). Every read
 * here is an index scan of its first rows, whatever the supply.
 */
import type { SqlExecutor } from "../db";
import type { EditionTransferLog } from "./edition-events";
import { insertNewRows, type RowTable } from "./log-rows";

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/** ERC-1155 moves, one row per id moved: keyed by (collection, block, log, index in its batch). */
const EDITION_TRANSFERS: RowTable = {
  name: "index_edition_transfers",
  columns: [
    ["collection_id", "int"],
    ["block_number", "bigint"],
    ["log_index", "int"],
    ["batch_index", "int"],
    ["block_hash", "text"],
    ["transaction_hash", "text"],
    ["from_address", "text"],
    ["to_address", "text"],
    ["token_id", "numeric"],
    ["amount", "numeric"],
  ],
  keyColumns: 4,
};

/** The collections' counter changes a range made: supply (a sum of amounts) and holders. */
export interface CounterChanges {
  supply: Map<number, bigint>;
  holders: Map<number, bigint>;
}

/**
 * Stores the moves not stored yet; answers those it stored, in chain order. Copied in at once under
 * a savepoint, as ERC-721 transfers are (log-rows.ts insertNewRows); one stored already takes the careful way.
 */
export function insertEditionTransfers(tx: SqlExecutor, logs: EditionTransferLog[]): Promise<EditionTransferLog[]> {
  return insertNewRows(tx, EDITION_TRANSFERS, logs, (l) => [
    l.collectionId,
    l.blockNumber,
    l.logIndex,
    l.batchIndex,
    l.blockHash,
    l.transactionHash,
    l.from,
    l.to,
    l.tokenId,
    l.amount,
  ]);
}

/**
 * Moves each (edition, holder)'s balance, each edition's supply and holders, and each holder's
 * total by what `logs` (stored just now, in chain order) did; answers the collections' counter changes.
 */
export async function applyEditionHoldings(tx: SqlExecutor, logs: EditionTransferLog[]): Promise<CounterChanges> {
  const changes: CounterChanges = { supply: new Map(), holders: new Map() };
  if (logs.length === 0) return changes;
  const balances = new Map<string, { c: number; k: string; o: string; d: bigint }>();
  const editions = new Map<string, { c: number; k: string; s: bigint; h: bigint; m: number | null }>();
  const holders = new Map<string, { c: number; o: string; a: bigint; e: bigint }>();
  const move = (c: number, k: string, holder: string, d: bigint) => {
    if (holder === ZERO_ADDRESS) return;
    const key = `${c}:${k}:${holder}`;
    const entry = balances.get(key) ?? { c, k, o: holder, d: 0n };
    entry.d += d;
    balances.set(key, entry);
    const total = holders.get(`${c}:${holder}`) ?? { c, o: holder, a: 0n, e: 0n };
    total.a += d;
    holders.set(`${c}:${holder}`, total);
  };
  for (const log of logs) {
    const key = `${log.collectionId}:${log.tokenId}`;
    const edition = editions.get(key) ?? { c: log.collectionId, k: log.tokenId, s: 0n, h: 0n, m: null };
    const amount = BigInt(log.amount);
    if (log.from === ZERO_ADDRESS) {
      edition.s += amount;
      edition.m ??= log.blockNumber;
    }
    if (log.to === ZERO_ADDRESS) edition.s -= amount;
    editions.set(key, edition);
    move(log.collectionId, log.tokenId, log.from, -amount);
    move(log.collectionId, log.tokenId, log.to, amount);
  }
  const changed = [...balances.values()].filter((b) => b.d !== 0n);
  if (changed.length > 0) {
    const { rows } = await tx.query<{ c: number; k: string; o: string; a: string; inserted: boolean }>(
      `INSERT INTO index_edition_balances (collection_id, token_id, holder, amount)
       SELECT c, k, o, d FROM json_to_recordset($1::json) AS x(c int, k numeric, o text, d numeric)
       ON CONFLICT (collection_id, token_id, holder) DO UPDATE
         SET amount = index_edition_balances.amount + EXCLUDED.amount
       RETURNING collection_id AS c, token_id::text AS k, holder AS o, amount::text AS a, (xmax = 0) AS inserted`,
      [JSON.stringify(changed.map((b) => ({ c: b.c, k: b.k, o: b.o, d: b.d.toString() })))],
    );
    // A holder of an edition is new when its row was inserted with an amount, gone when one fell to 0.
    const gone: Array<{ c: number; k: string; o: string }> = [];
    for (const row of rows) {
      const amount = BigInt(row.a);
      const change = row.inserted ? (amount > 0n ? 1n : 0n) : amount <= 0n ? -1n : 0n;
      if (amount <= 0n) gone.push({ c: Number(row.c), k: row.k, o: row.o });
      if (change === 0n) continue;
      editions.get(`${row.c}:${row.k}`)!.h += change;
      holders.get(`${row.c}:${row.o}`)!.e += change;
    }
    if (gone.length > 0)
      await tx.query(
        `DELETE FROM index_edition_balances b USING json_to_recordset($1::json) AS x(c int, k numeric, o text)
         WHERE b.collection_id = x.c AND b.token_id = x.k AND b.holder = x.o`,
        [JSON.stringify(gone)],
      );
  }
  await tx.query(
    `INSERT INTO index_editions (collection_id, token_id, supply, holders, minted_block)
     SELECT c, k, s, h, m FROM json_to_recordset($1::json) AS x(c int, k numeric, s numeric, h bigint, m bigint)
     ON CONFLICT (collection_id, token_id) DO UPDATE
       SET supply = index_editions.supply + EXCLUDED.supply, holders = index_editions.holders + EXCLUDED.holders,
         minted_block = COALESCE(index_editions.minted_block, EXCLUDED.minted_block)`,
    [JSON.stringify([...editions.values()].map((e) => ({ ...e, s: e.s.toString(), h: e.h.toString() })))],
  );
  for (const e of editions.values()) changes.supply.set(e.c, (changes.supply.get(e.c) ?? 0n) + e.s);
  const totals = [...holders.values()].filter((h) => h.a !== 0n || h.e !== 0n);
  if (totals.length > 0) {
    const { rows } = await tx.query<{ c: number; o: string; a: string; inserted: boolean }>(
      `INSERT INTO index_edition_holders (collection_id, holder, amount, editions)
       SELECT c, o, a, e FROM json_to_recordset($1::json) AS x(c int, o text, a numeric, e bigint)
       ON CONFLICT (collection_id, holder) DO UPDATE
         SET amount = index_edition_holders.amount + EXCLUDED.amount,
           editions = index_edition_holders.editions + EXCLUDED.editions
       RETURNING collection_id AS c, holder AS o, amount::text AS a, (xmax = 0) AS inserted`,
      [JSON.stringify(totals.map((h) => ({ c: h.c, o: h.o, a: h.a.toString(), e: h.e.toString() })))],
    );
    const gone: Array<{ c: number; o: string }> = [];
    for (const row of rows) {
      const amount = BigInt(row.a);
      const change = row.inserted ? (amount > 0n ? 1n : 0n) : amount <= 0n ? -1n : 0n;
      if (amount <= 0n) gone.push({ c: Number(row.c), o: row.o });
      if (change !== 0n) changes.holders.set(Number(row.c), (changes.holders.get(Number(row.c)) ?? 0n) + change);
    }
    if (gone.length > 0)
      await tx.query(
        `DELETE FROM index_edition_holders h USING json_to_recordset($1::json) AS x(c int, o text)
         WHERE h.collection_id = x.c AND h.holder = x.o`,
        [JSON.stringify(gone)],
      );
  }
  return changes;
}

/**
 * Undoes the moves of collections `ids` above block `fork` (a reorg) and counts the editions they
 * touched anew from the moves left: reorgs are rare, and a recount cannot drift. Answers how many
 * editions were touched.
 */
export async function removeEditionTransfersAbove(tx: SqlExecutor, ids: number[], fork: number): Promise<number> {
  const { rows: affected } = await tx.query<{ c: number; k: string }>(
    `WITH gone AS (
       DELETE FROM index_edition_transfers WHERE collection_id = ANY($1::int[]) AND block_number > $2
       RETURNING collection_id, token_id)
     SELECT DISTINCT collection_id AS c, token_id::text AS k FROM gone`,
    [ids, fork],
  );
  if (affected.length === 0) return 0;
  const touched = JSON.stringify(affected.map((row) => ({ c: Number(row.c), k: row.k })));
  await tx.query(
    `DELETE FROM index_edition_balances b USING json_to_recordset($1::json) AS x(c int, k numeric)
     WHERE b.collection_id = x.c AND b.token_id = x.k`,
    [touched],
  );
  await tx.query(
    `INSERT INTO index_edition_balances (collection_id, token_id, holder, amount)
     SELECT m.c, m.k, m.o, sum(m.d) FROM (
       SELECT t.collection_id AS c, t.token_id AS k, t.to_address AS o, t.amount AS d
       FROM index_edition_transfers t JOIN json_to_recordset($1::json) AS x(c int, k numeric)
         ON t.collection_id = x.c AND t.token_id = x.k
       WHERE t.to_address <> $2
       UNION ALL
       SELECT t.collection_id, t.token_id, t.from_address, -t.amount
       FROM index_edition_transfers t JOIN json_to_recordset($1::json) AS x(c int, k numeric)
         ON t.collection_id = x.c AND t.token_id = x.k
       WHERE t.from_address <> $2) m
     GROUP BY m.c, m.k, m.o HAVING sum(m.d) > 0`,
    [touched, ZERO_ADDRESS],
  );
  await tx.query(
    `DELETE FROM index_editions e USING json_to_recordset($1::json) AS x(c int, k numeric)
     WHERE e.collection_id = x.c AND e.token_id = x.k`,
    [touched],
  );
  await tx.query(
    `INSERT INTO index_editions (collection_id, token_id, supply, holders, minted_block)
     SELECT t.collection_id, t.token_id,
       coalesce(sum(t.amount) FILTER (WHERE t.from_address = $2), 0)
         - coalesce(sum(t.amount) FILTER (WHERE t.to_address = $2), 0),
       (SELECT count(*) FROM index_edition_balances b WHERE b.collection_id = t.collection_id AND b.token_id = t.token_id),
       min(t.block_number) FILTER (WHERE t.from_address = $2)
     FROM index_edition_transfers t JOIN json_to_recordset($1::json) AS x(c int, k numeric)
       ON t.collection_id = x.c AND t.token_id = x.k
     GROUP BY t.collection_id, t.token_id`,
    [touched, ZERO_ADDRESS],
  );
  for (const id of new Set(affected.map((row) => Number(row.c)))) {
    await tx.query("DELETE FROM index_edition_holders WHERE collection_id = $1", [id]);
    await tx.query(
      `INSERT INTO index_edition_holders (collection_id, holder, amount, editions)
       SELECT collection_id, holder, sum(amount), count(*) FROM index_edition_balances WHERE collection_id = $1
       GROUP BY collection_id, holder`,
      [id],
    );
    await tx.query(
      `UPDATE indexed_collections SET
         supply = (SELECT coalesce(sum(supply), 0) FROM index_editions WHERE collection_id = $1),
         holders = (SELECT count(*) FROM index_edition_holders WHERE collection_id = $1)
       WHERE id = $1`,
      [id],
    );
  }
  return affected.length;
}

/** The moves of `ranges` (collection, final block before) up to `finalTo`, news only, as the transfers-final hooks take them. */
export async function finalEditionTransfers(
  tx: SqlExecutor,
  ranges: Array<[number, number]>,
  finalTo: number,
): Promise<
  Array<{
    address: string;
    blockNumber: number;
    logIndex: number;
    batchIndex: number;
    blockHash: string;
    transactionHash: string;
    from: string;
    to: string;
    tokenId: string;
    amount: string;
  }>
> {
  const { rows } = await tx.query<{
    address: string;
    block_number: string;
    log_index: number;
    batch_index: number;
    block_hash: string;
    transaction_hash: string;
    from_address: string;
    to_address: string;
    token_id: string;
    amount: string;
  }>(
    `SELECT c.address, t.block_number::text AS block_number, t.log_index, t.batch_index, t.block_hash,
       t.transaction_hash, t.from_address, t.to_address, t.token_id::text AS token_id, t.amount::text AS amount
     FROM json_to_recordset($1::json) AS r(id int, after bigint)
     JOIN indexed_collections c ON c.id = r.id AND c.news_from IS NOT NULL
     JOIN index_edition_transfers t ON t.collection_id = r.id AND t.block_number > GREATEST(r.after, c.news_from)
       AND t.block_number <= $2
     ORDER BY t.block_number, t.log_index, t.batch_index`,
    [JSON.stringify(ranges.map(([id, after]) => ({ id, after }))), finalTo],
  );
  return rows.map((row) => ({
    address: row.address,
    blockNumber: Number(row.block_number),
    logIndex: row.log_index,
    batchIndex: row.batch_index,
    blockHash: row.block_hash,
    transactionHash: row.transaction_hash,
    from: row.from_address,
    to: row.to_address,
    tokenId: row.token_id,
    amount: row.amount,
  }));
}

/** Rows written before the first refresh of the planner's statistics, and the growth that calls for the next. */
const ANALYZE_AFTER_ROWS = 1_000;
const ANALYZE_GROWTH = 0.2;

/**
 * Keeps the planner's statistics of the edition tables up with their growth, as PostgreSQL's
 * autovacuum would (PGlite runs none, and PostgreSQL's comes up to a minute late): without them a
 * table grown from nothing looks like a few rows, and the planner reads an edition's 10,000 holders
 * and sorts them (a bitmap scan) for a page of 10, where the index gives the page in order. With
 * them every read is an index scan of its first rows, at any supply.
 */
export class EditionStatistics {
  private since = 0;
  private atLast = 0;

  async grew(db: SqlExecutor, rows: number): Promise<void> {
    this.since += rows;
    if (this.since < ANALYZE_AFTER_ROWS || this.since < this.atLast * ANALYZE_GROWTH) return;
    this.atLast += this.since;
    this.since = 0;
    await db.query("ANALYZE index_edition_transfers, index_edition_balances, index_editions, index_edition_holders");
  }
}

// ---- reads ------------------------------------------------------------------------------------

export interface EditionSummary {
  tokenId: string;
  supply: bigint;
  holders: bigint;
  mintedBlock: number | null;
}

type EditionRow = { token_id: string; supply: string; holders: string; minted_block: string | null };
const toEdition = (row: EditionRow): EditionSummary => ({
  tokenId: row.token_id,
  supply: BigInt(row.supply),
  holders: BigInt(row.holders),
  mintedBlock: row.minted_block === null ? null : Number(row.minted_block),
});
const EDITION_COLUMNS =
  "token_id::text AS token_id, supply::text AS supply, holders::text AS holders, minted_block::text AS minted_block";

/** The editions of collection `id`, ascending, after `afterTokenId`. */
export async function editions(
  db: SqlExecutor,
  id: number,
  limit: number,
  afterTokenId?: string,
): Promise<EditionSummary[]> {
  const { rows } = await db.query<EditionRow>(
    `SELECT ${EDITION_COLUMNS} FROM index_editions
     WHERE collection_id = $1 AND ($3::numeric IS NULL OR token_id > $3::numeric)
     ORDER BY index_editions.token_id LIMIT $2`,
    [id, limit, afterTokenId ?? null],
  );
  return rows.map(toEdition);
}

/** One edition; null when the index has no move of it. */
export async function edition(db: SqlExecutor, id: number, tokenId: string): Promise<EditionSummary | null> {
  const { rows } = await db.query<EditionRow>(
    `SELECT ${EDITION_COLUMNS} FROM index_editions WHERE collection_id = $1 AND token_id = $2`,
    [id, tokenId],
  );
  return rows.length > 0 ? toEdition(rows[0]) : null;
}

/** Where a page of holders ended: the last one's amount and address. */
export interface HolderAfter {
  amount: bigint;
  holder: string;
}

/** The holders of edition `tokenId`, most first (then by address), after `after`. */
export async function editionHolders(
  db: SqlExecutor,
  id: number,
  tokenId: string,
  limit: number,
  after?: HolderAfter,
): Promise<Array<{ holder: string; amount: bigint }>> {
  const { rows } = await db.query<{ holder: string; amount: string }>(
    `SELECT holder, amount::text AS amount FROM index_edition_balances
     WHERE collection_id = $1 AND token_id = $2
       AND ($4::numeric IS NULL OR amount < $4::numeric OR (amount = $4::numeric AND holder > $5))
     ORDER BY index_edition_balances.amount DESC, index_edition_balances.holder
     LIMIT $3`,
    [id, tokenId, limit, after?.amount.toString() ?? null, after?.holder ?? null],
  );
  return rows.map((row) => ({ holder: row.holder, amount: BigInt(row.amount) }));
}

/** The holders of any edition of collection `id`, most in all first (then by address), after `after`. */
export async function editionOwners(
  db: SqlExecutor,
  id: number,
  limit: number,
  after?: HolderAfter,
): Promise<Array<{ holder: string; amount: bigint; editions: bigint }>> {
  const { rows } = await db.query<{ holder: string; amount: string; editions: string }>(
    `SELECT holder, amount::text AS amount, editions::text AS editions FROM index_edition_holders
     WHERE collection_id = $1
       AND ($3::numeric IS NULL OR amount < $3::numeric OR (amount = $3::numeric AND holder > $4))
     ORDER BY index_edition_holders.amount DESC, index_edition_holders.holder
     LIMIT $2`,
    [id, limit, after?.amount.toString() ?? null, after?.holder ?? null],
  );
  return rows.map((row) => ({ holder: row.holder, amount: BigInt(row.amount), editions: BigInt(row.editions) }));
}

/** What `holder` holds of each edition, by id ascending, after `afterTokenId`. */
export async function editionHoldings(
  db: SqlExecutor,
  id: number,
  holder: string,
  limit: number,
  afterTokenId?: string,
): Promise<Array<{ tokenId: string; amount: bigint }>> {
  const { rows } = await db.query<{ token_id: string; amount: string }>(
    `SELECT token_id::text AS token_id, amount::text AS amount FROM index_edition_balances
     WHERE collection_id = $1 AND holder = $2 AND ($4::numeric IS NULL OR token_id > $4::numeric)
     ORDER BY index_edition_balances.token_id LIMIT $3`,
    [id, holder, limit, afterTokenId ?? null],
  );
  return rows.map((row) => ({ tokenId: row.token_id, amount: BigInt(row.amount) }));
}

/** What `holder` holds of every edition together, and of how many editions. */
export async function editionTotal(
  db: SqlExecutor,
  id: number,
  holder: string,
): Promise<{ amount: bigint; editions: bigint }> {
  const { rows } = await db.query<{ amount: string; editions: string }>(
    "SELECT amount::text AS amount, editions::text AS editions FROM index_edition_holders WHERE collection_id = $1 AND holder = $2",
    [id, holder],
  );
  return rows.length > 0
    ? { amount: BigInt(rows[0].amount), editions: BigInt(rows[0].editions) }
    : { amount: 0n, editions: 0n };
}

/** Where a page of moves ended. */
export interface MoveAfter {
  blockNumber: number;
  logIndex: number;
  batchIndex: number;
}

/** The moves of edition `tokenId`, oldest first, after `after`. */
export async function editionTransfersOf(
  db: SqlExecutor,
  id: number,
  tokenId: string,
  limit: number,
  after?: MoveAfter,
): Promise<
  Array<{
    blockNumber: number;
    logIndex: number;
    batchIndex: number;
    transactionHash: string;
    from: string;
    to: string;
    amount: string;
  }>
> {
  const { rows } = await db.query<{
    block_number: string;
    log_index: number;
    batch_index: number;
    transaction_hash: string;
    from_address: string;
    to_address: string;
    amount: string;
  }>(
    `SELECT block_number::text AS block_number, log_index, batch_index, transaction_hash, from_address, to_address,
       amount::text AS amount
     FROM index_edition_transfers
     WHERE collection_id = $1 AND token_id = $2
       AND ($4::bigint IS NULL OR (block_number, log_index, batch_index) > ($4::bigint, $5::int, $6::int))
     ORDER BY index_edition_transfers.block_number, index_edition_transfers.log_index, index_edition_transfers.batch_index
     LIMIT $3`,
    [id, tokenId, limit, after?.blockNumber ?? null, after?.logIndex ?? null, after?.batchIndex ?? null],
  );
  return rows.map((row) => ({
    blockNumber: Number(row.block_number),
    logIndex: row.log_index,
    batchIndex: row.batch_index,
    transactionHash: row.transaction_hash,
    from: row.from_address,
    to: row.to_address,
    amount: row.amount,
  }));
}
