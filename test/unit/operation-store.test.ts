import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { openDatabase, type SqlDriver } from "../../server/db";
import { OperationStore, type Operation } from "../../server/engine";
import { IdempotencyKeyTaken } from "../../server/engine/operation-store";
import { seedPglite } from "../support/pglite-template";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const LEASE = { owner: "test", ms: 60_000 };

/** Each operation its own nonce and transaction: the store refuses two on one (migration 33, issue 51). */
let made = 0;

function operation(idempotencyKey: string | null = null): Operation {
  const now = new Date();
  const nonce = made++;
  return {
    id: randomUUID(),
    chainId: "31337",
    from: ALICE,
    operation: "mint",
    contractAddress: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    fingerprint: "fp",
    idempotencyKey,
    status: "queued",
    nonce,
    call: { to: "0x5FbDB2315678afecb367f032d93F642f64180aa3", data: "0xa0712d68", value: 10n, gasLimit: 90_000n },
    transactions: [
      { hash: `0x${nonce.toString(16).padStart(64, "0")}`, raw: "0x02", maxFeePerGas: "3", maxPriorityFeePerGas: "1" },
    ],
    context: { value: "10" },
    result: null,
    error: null,
    response: null,
    blockNumber: null,
    blockHash: null,
    pendingSince: null,
    pendingSinceAt: null,
    final: false,
    reorgs: 0,
    accessKeyId: idempotencyKey === null ? null : "root",
    createdAt: now,
    updatedAt: now,
  };
}

describe("operation store: writes asked for together are committed together (PGlite)", function () {
  let dir: string;
  let db: SqlDriver;
  let store: OperationStore;

  before(async function () {
    this.timeout(60_000);
    dir = await mkdtemp(path.join(tmpdir(), "operations-"));
    db = await openDatabase({ dataDir: await seedPglite(dir) });
    store = new OperationStore(db);
  });

  after(async function () {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("200 concurrent inserts all land, as they were given; a second row with a taken Idempotency-Key fails alone", async function () {
    const ops = Array.from({ length: 200 }, () => operation());
    const key = `key-${randomUUID()}`;
    const first = operation(key);
    const second = operation(key);
    const results = await Promise.allSettled([...ops, first, second].map((op) => store.insert(op, LEASE)));
    expect(results.slice(0, 201).every((r) => r.status === "fulfilled")).to.equal(true);
    const refused = results[201];
    expect(refused.status === "rejected" && refused.reason instanceof IdempotencyKeyTaken).to.equal(true);
    const stored = await store.find(ops[123].id);
    expect({ ...stored, createdAt: undefined, updatedAt: undefined }).to.deep.equal({
      ...ops[123],
      // Not made through MCP: the store says so (migration 29).
      via: null,
      createdAt: undefined,
      updatedAt: undefined,
    });
    expect((await store.findByIdempotencyKey("31337", ALICE, key))?.id).to.equal(first.id);
    expect(await store.find(second.id)).to.equal(null);
  });

  it("concurrent updates of one operation apply in the order asked; nulls are stored as NULL", async function () {
    const op = operation();
    await store.insert(op, LEASE);
    await Promise.all([
      store.update(op.id, { status: "sent", pendingSince: 3 }),
      store.update(op.id, { blockNumber: 9, blockHash: "0xb9" }),
      store.update(op.id, { blockNumber: null, blockHash: null, pendingSince: 10 }),
      store.update(op.id, { result: { tokenIds: ["1"] }, error: null, response: { status: 200, body: "{}" } }),
    ]);
    const stored = (await store.find(op.id))!;
    expect(stored).to.deep.include({
      status: "sent",
      pendingSince: 10,
      blockNumber: null,
      blockHash: null,
      result: { tokenIds: ["1"] },
      error: null,
      response: { status: 200, body: "{}" },
    });
    await store.update(op.id, { result: null, response: null });
    const { rows } = await db.query<{ empty: boolean }>(
      "SELECT result IS NULL AND response_body IS NULL AS empty FROM operations WHERE id = $1",
      [op.id],
    );
    expect(rows[0].empty).to.equal(true);
  });

  it("a delete asked for with other writes removes only its operation", async function () {
    const [kept, gone] = [operation(), operation()];
    await Promise.all([store.insert(kept, LEASE), store.insert(gone, LEASE)]);
    await Promise.all([store.update(kept.id, { status: "sent" }), store.delete(gone.id)]);
    expect((await store.find(kept.id))?.status).to.equal("sent");
    expect(await store.find(gone.id)).to.equal(null);
  });
});
