/**
 * The reference contract's drop events in the index (migration 23): AllowlistMinted and
 * VoucherRedeemed, read with the Transfer logs of each range, stored and undone with them, so that
 * an account's allowlist mints and a voucher's redemption are answered from the store.
 */
import { id } from "ethers";
import type { SqlExecutor } from "../db";
import { logRow } from "./log-rows";

export const ALLOWLIST_MINTED_TOPIC = id("AllowlistMinted(address,uint256)");
export const VOUCHER_REDEEMED_TOPIC = id("VoucherRedeemed(bytes32,address,uint256,uint256)");

interface DropLogBase {
  collectionId: number;
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  transactionHash: string;
}

/** One drop event of an indexed collection. Addresses lower-case, amounts decimal strings. */
export type DropLog =
  | (DropLogBase & { kind: "allowlistMint"; account: string; amount: string })
  | (DropLogBase & { kind: "voucherRedeemed"; voucherId: string; to: string; amount: string; price: string });

/** A log of eth_getLogs, as far as drop events need it. */
export interface RawDropLog {
  topics: string[];
  data: string;
}

const word = (data: string, n: number) => BigInt(`0x${data.slice(2 + 64 * n, 2 + 64 * (n + 1))}`).toString();
const topicAddress = (topic: string) => `0x${topic.slice(-40).toLowerCase()}`;

/**
 * The drop event `raw` holds, or undefined when it is none: another contract's event of the same
 * name but other indexed arguments (its topics or data do not fit) is not one.
 */
export function dropEvent(raw: RawDropLog, base: DropLogBase): DropLog | undefined {
  const [topic] = raw.topics;
  if (topic === ALLOWLIST_MINTED_TOPIC && raw.topics.length === 2 && raw.data.length === 2 + 64)
    return { ...base, kind: "allowlistMint", account: topicAddress(raw.topics[1]), amount: word(raw.data, 0) };
  if (topic === VOUCHER_REDEEMED_TOPIC && raw.topics.length === 3 && raw.data.length === 2 + 128)
    return {
      ...base,
      kind: "voucherRedeemed",
      voucherId: raw.topics[1].toLowerCase(),
      to: topicAddress(raw.topics[2]),
      amount: word(raw.data, 0),
      price: word(raw.data, 1),
    };
  return undefined;
}

/** Stores the drop events of a range (those stored already are left as they are). */
export async function insertDropLogs(tx: SqlExecutor, logs: DropLog[]): Promise<void> {
  const mints = logs.filter((log) => log.kind === "allowlistMint");
  const redemptions = logs.filter((log) => log.kind === "voucherRedeemed");
  if (mints.length > 0)
    await tx.query(
      `INSERT INTO index_allowlist_mints (collection_id, block_number, log_index, block_hash, transaction_hash, account, amount)
       SELECT c, b, i, h, t, a, n FROM json_to_recordset($1::json)
         AS x(c int, b bigint, i int, h text, t text, a text, n numeric)
       ON CONFLICT DO NOTHING`,
      [
        JSON.stringify(
          mints.map((l) =>
            logRow(l, {
              a: l.account,
              n: l.amount,
            }),
          ),
        ),
      ],
    );
  if (redemptions.length > 0)
    await tx.query(
      `INSERT INTO index_voucher_redemptions (collection_id, block_number, log_index, block_hash, transaction_hash,
         voucher_id, recipient, amount, price)
       SELECT c, b, i, h, t, v, r, n, p FROM json_to_recordset($1::json)
         AS x(c int, b bigint, i int, h text, t text, v text, r text, n numeric, p numeric)
       ON CONFLICT DO NOTHING`,
      [
        JSON.stringify(
          redemptions.map((l) =>
            logRow(l, {
              v: l.voucherId,
              r: l.to,
              n: l.amount,
              p: l.price,
            }),
          ),
        ),
      ],
    );
}

/** Undoes the drop events of collections `ids` above block `fork` (a reorg). */
export async function removeDropLogsAbove(tx: SqlExecutor, ids: number[], fork: number): Promise<void> {
  for (const table of ["index_allowlist_mints", "index_voucher_redemptions"])
    await tx.query(`DELETE FROM ${table} WHERE collection_id = ANY($1::int[]) AND block_number > $2`, [ids, fork]);
}

/** How many tokens `account` (lower-case) minted from the allowlist of collection `id`, every root counted. */
export async function allowlistMinted(db: SqlExecutor, id: number, account: string): Promise<bigint> {
  const { rows } = await db.query<{ minted: string }>(
    "SELECT coalesce(sum(amount), 0)::text AS minted FROM index_allowlist_mints WHERE collection_id = $1 AND account = $2",
    [id, account],
  );
  return BigInt(rows[0].minted);
}

/** Where voucher `voucherId` (lower-case) of collection `id` was redeemed; undefined while it is not. */
export async function voucherRedemption(
  db: SqlExecutor,
  id: number,
  voucherId: string,
): Promise<{ transactionHash: string; blockNumber: number } | undefined> {
  const { rows } = await db.query<{ transaction_hash: string; block_number: string }>(
    `SELECT transaction_hash, block_number::text AS block_number FROM index_voucher_redemptions
     WHERE collection_id = $1 AND voucher_id = $2 ORDER BY block_number, log_index LIMIT 1`,
    [id, voucherId],
  );
  return rows[0] ? { transactionHash: rows[0].transaction_hash, blockNumber: Number(rows[0].block_number) } : undefined;
}
