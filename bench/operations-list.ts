/**
 * GET /nft/operations' first page at 1,000 and at 100,000 operations in the store, in the same run:
 * two PGlite stores (the default store) in this process, read in turn, so the ratio shows what the
 * table's size costs a page.
 * Measured: what the route does with the store (OperationList.page, each operation rendered as GET
 * /nft/operations/{id} shows it, the JSON), not HTTP and auth, whose cost does not grow with the
 * table. Readers and filters measured:
 *  - the root key, no filter (the console's live list): the check, first page within 1.5x;
 *  - a key limited to one wallet; ?wallet=; ?collection=; ?status=failed: the same check, each.
 * Rows are written with SQL (generate_series), newest last, as a service writes them: 50 signers,
 * 20 collections, 1% failed, a few unsettled.
 *
 * BENCH_SAMPLES (default 200) first pages per case and size. Run: npm run bench:operations
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { getAddress } from "ethers";
import { openDatabase, type SqlDriver } from "../server/db";
import { operationView } from "../server/engine";
import { OperationList, type OperationListQuery } from "../server/engine/operation-list";
import { median } from "./median";
import { checked, envSized, sized } from "./smoke";

const SAMPLES = envSized("BENCH_SAMPLES", 200, 5);
const LIMIT = 50;
const LARGE = sized(100_000, 2_000);
const MAX_RATIO = 1.5;
const CHAIN_ID = "31337";

const hexAddress = (n: number, prefix: string) =>
  getAddress(`0x${prefix}${n.toString(16).padStart(40 - prefix.length, "0")}`);
const WALLETS = Array.from({ length: 50 }, (_, i) => hexAddress(i + 1, "aa"));
const COLLECTIONS = Array.from({ length: 20 }, (_, i) => hexAddress(i + 1, "cc"));

/** `limit`: a filter's first page holds as many rows at 1,000 operations as at 100,000. */
type Case = { name: string; limit?: number; query: Omit<OperationListQuery, "chainId" | "limit"> };

const CASES: Case[] = [
  { name: "root key, no filter", query: { reader: { all: true } } },
  {
    name: "key limited to a wallet",
    query: { reader: { all: false, keyId: "ak_bench_0", wallets: [WALLETS[7].toLowerCase()], collections: null } },
  },
  {
    name: "key limited to a collection",
    query: { reader: { all: false, keyId: "ak_bench_0", wallets: null, collections: [COLLECTIONS[2]] } },
  },
  { name: "?wallet=", limit: 20, query: { reader: { all: true }, wallet: WALLETS[3] } },
  { name: "?collection=", query: { reader: { all: true }, collection: COLLECTIONS[5] } },
  { name: "?status=failed", limit: 10, query: { reader: { all: true }, status: "failed" } },
];

/** Writes operations `from` to `to` - 1 (their sequence numbers), each a second after the one before. */
async function load(db: SqlDriver, from: number, to: number): Promise<void> {
  await db.query(
    `INSERT INTO operations (id, chain_id, from_address, operation, contract_address, fingerprint, status, nonce,
       tx_to, tx_data, tx_value, gas_limit, transactions, context, result, error, block_number, block_hash,
       access_key_id, created_at, updated_at)
     SELECT md5(n::text)::uuid::text, $1, ($4::text[])[1 + n % 50], 'mint', ($5::text[])[1 + n % 20], md5(n::text),
       CASE WHEN n % 100 = 7 THEN 'failed' WHEN n % 997 = 3 THEN 'sent' ELSE 'confirmed' END, n / 50,
       ($5::text[])[1 + n % 20], '0xa0712d680000000000000000000000000000000000000000000000000000000000000001',
       '10000000000000000', '120000',
       jsonb_build_array(jsonb_build_object('hash', '0x' || md5(n::text) || md5(n::text), 'raw', '0x02f8',
         'maxFeePerGas', '2000000000', 'maxPriorityFeePerGas', '1000000000')),
       '{"value":"10000000000000000"}',
       CASE WHEN n % 100 = 7 THEN NULL ELSE jsonb_build_object('tokenIds', jsonb_build_array(n::text), 'value', '10000000000000000') END,
       CASE WHEN n % 100 = 7 THEN '{"code":"CONTRACT_REVERTED","message":"MaxSupplyExceeded"}'::jsonb END,
       n, '0x' || md5(n::text) || md5(n::text), 'ak_bench_' || (n % 10),
       timestamptz '2026-01-01' + n * interval '1 second', timestamptz '2026-01-01' + n * interval '1 second'
     FROM generate_series($2::integer, $3::integer - 1) AS n`,
    [CHAIN_ID, from, to, WALLETS, COLLECTIONS],
  );
}

/**
 * The first page's p50 (ms) for each case on each store, SAMPLES times, the stores and cases
 * interleaved so that whatever else loads the machine falls on all alike; a warm-up round first.
 */
async function firstPages(lists: OperationList[]): Promise<number[][]> {
  const times = lists.map(() => CASES.map(() => [] as number[]));
  for (let s = -5; s < SAMPLES; s++) {
    for (const [i, c] of CASES.entries()) {
      for (const [l, list] of lists.entries()) {
        const started = performance.now();
        const page = await list.page({ chainId: CHAIN_ID, limit: c.limit ?? LIMIT, ...c.query });
        JSON.stringify({ operations: page.operations.map(operationView) });
        if (s >= 0) times[l][i].push(performance.now() - started);
        if (page.operations.length !== (c.limit ?? LIMIT)) throw new Error(`${c.name}: a first page not full`);
      }
    }
  }
  return times.map((perCase) => perCase.map(median));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-operations-list-"));
  const smallDb = await openDatabase({ dataDir: path.join(dir, "small") });
  const largeDb = await openDatabase({ dataDir: path.join(dir, "large") });
  try {
    await load(smallDb, 0, 1_000);
    const loading = performance.now();
    await load(largeDb, 0, LARGE);
    console.log(`wrote ${LARGE} operations in ${((performance.now() - loading) / 1000).toFixed(1)} s`);
    const [small, large] = await firstPages([new OperationList(smallDb), new OperationList(largeDb)]);
    let failed = false;
    console.log(`GET /nft/operations first page (limit ${LIMIT} unless said), p50 of ${SAMPLES}, PGlite:`);
    for (const [i, c] of CASES.entries()) {
      const ratio = large[i] / small[i];
      const ok = ratio <= MAX_RATIO;
      failed ||= !ok;
      console.log(
        `  ${`${c.name}${c.limit ? ` (limit ${c.limit})` : ""}`.padEnd(38)} 1,000: ${small[i].toFixed(2)} ms   100,000: ${large[i].toFixed(2)} ms   ratio ${ratio.toFixed(2)}x ${ok ? "ok" : `FAIL (> ${MAX_RATIO}x)`}`,
      );
    }
    if (failed) process.exitCode = checked(1);
  } finally {
    await smallDb.close();
    await largeDb.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
