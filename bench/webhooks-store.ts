/**
 * The store's share of webhooks' cost to writes, on PGlite, where the database runs in the
 * service's own thread: the engine's writes of BENCH_MINTS mints through OperationStore (a queued
 * insert, then sent, then confirmed with its result, from 16 writers, each step a new task of the
 * event loop as a request's is), with no endpoint, then with one taking every operation event and
 * the worker delivering them to a receiver in its own process, timed until the last delivery came;
 * alternating, BENCH_ROUNDS times, in one process. No chain and no HTTP API: the writes and the
 * webhooks' triggers, rounds, rendering, signing and POSTs, against the writes alone. A component
 * of bench:webhooks' cost to writes, with far less noise; not its target.
 * Measured as the main thread's busy time (event loop utilization), which on PGlite bounds the
 * service's mint rate; printed per mint, and the paired difference.
 * Run: npm run bench:webhooks:store   (BENCH_MINTS, BENCH_ROUNDS, BENCH_CHAIN_MS)
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase } from "../server/db";
import { OperationStore, type Operation } from "../server/engine";
import { startWebhookApp, ROOT } from "../test/webhooks/fixture";
import { startChildReceiver } from "./child-receiver";
import { median } from "./median";
import { envSized } from "./smoke";

const MINTS = envSized("BENCH_MINTS", 1000, 20);
const ROUNDS = envSized("BENCH_ROUNDS", 5, 1);
const WRITERS = 16;
const COLLECTION = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

/** Between a mint's writes, as the chain's answers take a while: the writes batch as in the service. */
const CHAIN_MS = Number(process.env.BENCH_CHAIN_MS ?? 5);
const chainAnswer = () => new Promise((resolve) => setTimeout(resolve, CHAIN_MS));
const hex = (bytes: number) => `0x${randomBytes(bytes).toString("hex")}`;

/** A mint as the engine records it before broadcasting: one signed transaction, nothing mined yet. */
function queuedMint(from: string, nonce: number): Operation {
  const now = new Date();
  const data = `0xa0712d68${"0".repeat(63)}1`;
  return {
    id: randomUUID(),
    chainId: "31337",
    from,
    operation: "mint",
    contractAddress: COLLECTION,
    fingerprint: randomBytes(32).toString("hex"),
    idempotencyKey: null,
    status: "queued",
    nonce,
    call: { to: COLLECTION, data, value: 10n ** 16n, gasLimit: 70_714n },
    // A type-2 transaction's size: what the operation row and its events carry.
    transactions: [{ hash: hex(32), raw: hex(154), maxFeePerGas: "1000000016", maxPriorityFeePerGas: "1000000000" }],
    context: { value: "10000000000000000" },
    result: null,
    error: null,
    response: null,
    blockNumber: null,
    blockHash: null,
    pendingSince: null,
    pendingSinceAt: null,
    final: false,
    reorgs: 0,
    accessKeyId: null,
    createdAt: now,
    updatedAt: now,
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-webhooks-store-"));
  const db = await openDatabase({ dataDir: path.join(dir, "pglite") });
  const app = await startWebhookApp(db);
  const receiver = await startChildReceiver();
  const store = new OperationStore(db);
  const wallets = Array.from({ length: WRITERS }, () => ({ from: hex(20), nonce: 0 }));
  let block = 0;

  /**
   * The main thread's busy time per mint (ms) over the writes of MINTS mints and, with an
   * endpoint, until their 2 x MINTS events arrived.
   */
  async function mints(delivered?: number): Promise<number> {
    const started = performance.eventLoopUtilization();
    let next = 0;
    await Promise.all(
      wallets.map(async (wallet) => {
        while (next < MINTS) {
          next++;
          const op = queuedMint(wallet.from, wallet.nonce++);
          await store.insert(op, { owner: "bench", ms: 90_000 });
          await chainAnswer();
          await store.update(op.id, { status: "sent" });
          await chainAnswer();
          const tokenId = String(++block);
          const result = { tokenIds: [tokenId], value: "10000000000000000" };
          await store.update(op.id, {
            status: "confirmed",
            result,
            response: { status: 200, body: JSON.stringify({ status: "confirmed", operationId: op.id, ...result }) },
            blockNumber: block,
            blockHash: hex(32),
          });
          await chainAnswer();
        }
      }),
    );
    if (delivered !== undefined) await receiver.until(delivered + 2 * MINTS);
    return performance.eventLoopUtilization(started).active / MINTS;
  }

  try {
    const none: number[] = [];
    const one: number[] = [];
    // Round 0 warms up both paths (JIT, plans) and is not counted.
    for (let round = 0; round <= ROUNDS; round++) {
      const alone = await mints();
      const made = await app.api.request("POST", "/webhooks", {
        json: {
          url: receiver.url,
          events: ["operation.sent", "operation.replaced", "operation.confirmed", "operation.failed"],
        },
        headers: ROOT,
      });
      if (made.status !== 201) throw new Error(`endpoint: ${made.text}`);
      const withOne = await mints(await receiver.count());
      await app.api.request("DELETE", `/webhooks/${made.body.id}`, { headers: ROOT });
      if (round === 0) continue;
      none.push(alone);
      one.push(withOne);
    }
    // What one endpoint adds to a mint's main-thread time; a service's mint takes about 3 ms of it
    // on PGlite (bench:webhooks), so +0.33 ms is what a 0.9x cost to writes allows.
    const added = one.map((ms, i) => ms - none[i]);
    console.log(
      `store share (PGlite, ${MINTS} mints x ${ROUNDS} rounds, ${WRITERS} writers, ${CHAIN_MS} ms per chain answer): ` +
        `main thread busy ${median(none).toFixed(3)} ms per mint with no endpoint [${none.map((ms) => ms.toFixed(3)).join(", ")}], ` +
        `${median(one).toFixed(3)} with one, until delivered [${one.map((ms) => ms.toFixed(3)).join(", ")}]: ` +
        `median of the paired differences +${median(added).toFixed(3)} ms per mint`,
    );
  } finally {
    await app.close();
    receiver.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
