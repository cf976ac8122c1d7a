/**
 * ERC-4906 events in the index (migration 26): MetadataUpdate(uint256) and
 * BatchMetadataUpdate(uint256,uint256) of any indexed collection, read with the Transfer logs of
 * each range, stored and undone with them. Listeners drop what they keep of a collection's metadata
 * (tokenURI answers, served documents) when one is read; the final hooks report each once it is
 * CONFIRMATIONS deep (webhook `collection.metadata_updated`).
 */
import { id } from "ethers";
import type { SqlExecutor } from "../db";
import { logRow } from "./log-rows";

export const METADATA_UPDATE_TOPIC = id("MetadataUpdate(uint256)");
export const BATCH_METADATA_UPDATE_TOPIC = id("BatchMetadataUpdate(uint256,uint256)");

/** One ERC-4906 event of an indexed collection: tokens `fromTokenId`..`toTokenId` (decimal strings) changed. */
export interface MetadataUpdateLog {
  collectionId: number;
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  transactionHash: string;
  fromTokenId: string;
  toTokenId: string;
}

/** An ERC-4906 event as the final hooks receive it. */
export interface IndexedMetadataUpdate extends Omit<MetadataUpdateLog, "collectionId"> {
  chainId: string;
  /** The collection's address, lower-case. */
  collection: string;
}

/**
 * Runs inside the transaction that makes ERC-4906 events CONFIRMATIONS deep, in chain order; as
 * with transfers (TransfersFinalHook), only news: never the history read when a collection is first indexed.
 */
export type MetadataUpdatesFinalHook = (tx: SqlExecutor, updates: IndexedMetadataUpdate[]) => Promise<void>;

type Base = Omit<MetadataUpdateLog, "fromTokenId" | "toTokenId">;

const word = (data: string, n: number) => BigInt(`0x${data.slice(2 + 64 * n, 2 + 64 * (n + 1))}`).toString();

/** The ERC-4906 event `raw` holds, or undefined (neither topic, or arguments that do not fit: no token id is indexed). */
export function metadataUpdate(raw: { topics: string[]; data: string }, base: Base): MetadataUpdateLog | undefined {
  const [topic] = raw.topics;
  if (raw.topics.length !== 1) return undefined;
  if (topic === METADATA_UPDATE_TOPIC && raw.data.length === 2 + 64) {
    const token = word(raw.data, 0);
    return { ...base, fromTokenId: token, toTokenId: token };
  }
  if (topic === BATCH_METADATA_UPDATE_TOPIC && raw.data.length === 2 + 128)
    return { ...base, fromTokenId: word(raw.data, 0), toTokenId: word(raw.data, 1) };
  return undefined;
}

/** Stores a range's ERC-4906 events (those stored already are left as they are). */
export async function insertMetadataUpdates(tx: SqlExecutor, logs: MetadataUpdateLog[]): Promise<void> {
  if (logs.length === 0) return;
  await tx.query(
    `INSERT INTO index_metadata_updates (collection_id, block_number, log_index, block_hash, transaction_hash,
       from_token_id, to_token_id)
     SELECT c, b, i, h, t, f, o FROM json_to_recordset($1::json)
       AS x(c int, b bigint, i int, h text, t text, f numeric, o numeric)
     ON CONFLICT DO NOTHING`,
    [
      JSON.stringify(
        logs.map((l) =>
          logRow(l, {
            f: l.fromTokenId,
            o: l.toTokenId,
          }),
        ),
      ),
    ],
  );
}

/** Undoes the ERC-4906 events of collections `ids` above block `fork` (a reorg). */
export async function removeMetadataUpdatesAbove(tx: SqlExecutor, ids: number[], fork: number): Promise<void> {
  await tx.query("DELETE FROM index_metadata_updates WHERE collection_id = ANY($1::int[]) AND block_number > $2", [
    ids,
    fork,
  ]);
}

/**
 * The ERC-4906 events that become final in a batch and are news: of each collection `id`, those
 * above `after` and its news_from, up to `finalTo`, in chain order.
 */
export async function finalMetadataUpdates(
  tx: SqlExecutor,
  chainId: string,
  ranges: Array<{ id: number; after: number }>,
  finalTo: number,
): Promise<IndexedMetadataUpdate[]> {
  const { rows } = await tx.query<{
    address: string;
    block_number: string;
    log_index: number;
    block_hash: string;
    transaction_hash: string;
    from_token_id: string;
    to_token_id: string;
  }>(
    `SELECT c.address, m.block_number::text AS block_number, m.log_index, m.block_hash, m.transaction_hash,
       m.from_token_id::text AS from_token_id, m.to_token_id::text AS to_token_id
     FROM json_to_recordset($1::json) AS r(id int, after bigint)
     JOIN indexed_collections c ON c.id = r.id AND c.news_from IS NOT NULL
     JOIN index_metadata_updates m ON m.collection_id = r.id AND m.block_number > GREATEST(r.after, c.news_from)
       AND m.block_number <= $2
     ORDER BY m.block_number, m.log_index`,
    [JSON.stringify(ranges), finalTo],
  );
  return rows.map((row) => ({
    chainId,
    collection: row.address,
    blockNumber: Number(row.block_number),
    blockHash: row.block_hash,
    logIndex: row.log_index,
    transactionHash: row.transaction_hash,
    fromTokenId: row.from_token_id,
    toTokenId: row.to_token_id,
  }));
}
