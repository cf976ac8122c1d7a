/**
 * PGlite's happy path (migration 9): the worker reads new events past a cursor and sends them from
 * memory; only what that cannot finish becomes a queue row. What a user relies on must hold on it
 * as on the queue: nothing lost across a stop, nothing sent twice that was delivered, the events
 * of one operation in order past the memory's limits, the delivery log showing what is in flight,
 * and an endpoint disabled meanwhile getting what it took once it is enabled again.
 * Real PGlite store, real HTTP receivers, operations written to the store as the engine writes them.
 */
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Wallet } from "ethers";
import type { SqlDriver } from "../../server/db";
import { emitEvent } from "../../server/webhooks";
import type { JsonBody } from "../api/harness";
import { pgliteBackend, ROOT, sleep, startWebhookApp, waitFor, type WebhookApp } from "./fixture";
import { Receiver, type Answer, type Delivery } from "./receiver";

const COLLECTION = Wallet.createRandom().address;
const SENDER = Wallet.createRandom().address;
const backend = pgliteBackend();

describe("webhooks past the cursor (PGlite)", function () {
  let store: Awaited<ReturnType<typeof backend.open>>;
  let db: SqlDriver;
  let app: WebhookApp | undefined;
  const receivers: Receiver[] = [];

  beforeEach(async function () {
    store = await backend.open();
    db = store.db;
  });

  afterEach(async function () {
    await app?.close();
    app = undefined;
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await store.release();
  });

  async function receiver(answer?: (delivery: Delivery, index: number) => Answer) {
    const r = await Receiver.start(answer);
    receivers.push(r);
    return r;
  }

  async function subscribe(url: string, body: JsonBody = {}) {
    const res = await app!.api.request("POST", "/webhooks", {
      json: { url, events: ["operation.sent", "operation.confirmed"], ...body },
      headers: ROOT,
    });
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; secret: string } & JsonBody;
  }

  async function deliveriesOf(id: string): Promise<JsonBody[]> {
    const res = await app!.api.request("GET", `/webhooks/${id}/deliveries`, { headers: ROOT });
    expect(res.status, res.text).to.equal(200);
    return res.body.deliveries as JsonBody[];
  }

  /** An operation written as the engine writes it: queued, then each status in its own statement. */
  async function operationThrough(statuses: string[]): Promise<string> {
    const id = randomUUID();
    await db.query(
      `INSERT INTO operations (id, chain_id, from_address, operation, contract_address, fingerprint, status, nonce, transactions)
       VALUES ($1, '31337', $2, 'mint', $3, 'f', 'queued', 7, '[{"hash":"0x01","raw":"0x"}]')`,
      [id, SENDER, COLLECTION],
    );
    for (const status of statuses) await db.query("UPDATE operations SET status = $2 WHERE id = $1", [id, status]);
    return id;
  }

  async function queueRows(): Promise<number> {
    const { rows } = await db.query<{ n: string | number }>("SELECT count(*) AS n FROM webhook_deliveries");
    return Number(rows[0].n);
  }

  async function cursor(): Promise<number> {
    const { rows } = await db.query<{ seq: string | number }>("SELECT seq FROM webhook_cursor");
    return Number(rows[0].seq);
  }

  const opOf = (d: Delivery) => d.json.data.operationId as string;

  it("a delivery that succeeds at once leaves no queue row: the log shows it delivered, and the cursor passes it", async function () {
    app = await startWebhookApp(db);
    const r = await receiver();
    const endpoint = await subscribe(r.url);
    const id = await operationThrough(["sent", "confirmed"]);
    await r.until((d) => d.length === 2);
    expect(r.deliveries.map((d) => d.json.type)).to.deep.equal(["operation.sent", "operation.confirmed"]);
    const log = await waitFor(async () => {
      const list = await deliveriesOf(endpoint.id);
      return list.length === 2 && list.every((d) => d.status === "delivered") ? list : undefined;
    });
    expect(log.map((d) => d.attempts)).to.deep.equal([1, 1]);
    expect(await queueRows()).to.equal(0);
    const { rows } = await db.query<{ seq: string | number }>(
      "SELECT max(seq) AS seq FROM webhook_events WHERE operation_id = $1",
      [id],
    );
    await waitFor(async () => ((await cursor()) >= Number(rows[0].seq) ? true : undefined));
  });

  it("the delivery log shows a delivery in flight past the cursor as pending", async function () {
    app = await startWebhookApp(db);
    const r = await receiver(() => "hold");
    const endpoint = await subscribe(r.url);
    await operationThrough(["sent"]);
    await r.until((d) => d.length === 1);
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery).to.include({
      eventId: r.deliveries[0].id,
      type: "operation.sent",
      status: "pending",
      attempts: 0,
    });
    expect(await cursor()).to.be.below(await lastSeq());
  });

  it("a stop with a delivery in flight: the next process sends it again under its webhook-id, and nothing delivered before", async function () {
    app = await startWebhookApp(db);
    let held = true;
    const r = await receiver((d, i) => (i === 0 && held ? "hold" : 200));
    await subscribe(r.url, { events: ["operation.sent"] });
    const first = await operationThrough(["sent"]);
    await r.until((d) => d.length === 1);
    const later = [];
    for (let i = 0; i < 4; i++) later.push(await operationThrough(["sent"]));
    await r.until((d) => d.length === 5);
    // The cursor stays before the held delivery; the four after it are in the log.
    await sleep(200);
    await app.close();
    app = undefined;
    held = false;
    app = await startWebhookApp(db);
    await r.until((d) => d.length === 6);
    await sleep(500);
    expect(r.deliveries.map(opOf)).to.deep.equal([first, ...later, first]);
    expect(r.deliveries[5].id).to.equal(r.deliveries[0].id);
    expect(await queueRows()).to.equal(0);
  });

  it("an event read after its endpoint was disabled waits in the queue and arrives once it is enabled; one written while disabled never does", async function () {
    app = await startWebhookApp(db, { startWorker: false });
    const r = await receiver();
    const endpoint = await subscribe(r.url, { events: ["operation.sent"] });
    const taken = await operationThrough(["sent"]);
    const patch = (enabled: boolean) =>
      app!.api.request("PATCH", `/webhooks/${endpoint.id}`, { json: { enabled }, headers: ROOT });
    expect((await patch(false)).status).to.equal(200);
    await operationThrough(["sent"]); // while disabled
    app.webhooks.worker.start();
    await waitFor(async () => ((await queueRows()) === 1 ? true : undefined));
    // A marker event to an endpoint of its own through the same worker: once it has come, the
    // worker has gone past what the disabled endpoint took (a fixed sleep a slow worker outlasts).
    const marker = await receiver();
    const wallet = Wallet.createRandom().address;
    await subscribe(marker.url, { events: ["wallet.low_balance"], wallets: [wallet] });
    await db.transaction((tx) => emitEvent(tx, { type: "wallet.low_balance", data: { address: wallet }, wallet }));
    await marker.until((d) => d.length === 1);
    expect(r.deliveries).to.have.length(0);
    expect((await patch(true)).status).to.equal(200);
    await r.until((d) => d.length === 1);
    await sleep(500);
    expect(r.deliveries.map(opOf)).to.deep.equal([taken]);
  });

  it("disabled and enabled again before the worker read what it took: that arrives, and nothing written while it was disabled", async function () {
    app = await startWebhookApp(db, { startWorker: false });
    const r = await receiver();
    const endpoint = await subscribe(r.url, { events: ["operation.sent"] });
    const patch = async (enabled: boolean) => {
      const res = await app!.api.request("PATCH", `/webhooks/${endpoint.id}`, { json: { enabled }, headers: ROOT });
      expect(res.status, res.text).to.equal(200);
    };
    const before = await operationThrough(["sent"]);
    await patch(false);
    await operationThrough(["sent"]); // while disabled
    await patch(true);
    const between = await operationThrough(["sent"]);
    await patch(false);
    await operationThrough(["sent"]); // while disabled again
    await patch(true);
    const after = await operationThrough(["sent"]);
    app.webhooks.worker.start();
    await r.until((d) => d.length >= 3);
    await sleep(500);
    expect(r.deliveries.map(opOf)).to.deep.equal([before, between, after]);
    // Once the cursor passed them, the gaps are forgotten at the next enabling.
    await waitFor(async () => ((await cursor()) >= (await lastSeq()) ? true : undefined));
    await patch(false);
    await patch(true);
    const { rows } = await db.query<{ skipped: unknown }>("SELECT skipped FROM webhook_endpoints WHERE id = $1", [
      endpoint.id,
    ]);
    expect(rows[0].skipped).to.equal(null);
  });

  it("past what the worker keeps in memory for an endpoint, deliveries go to the queue: all arrive, each operation's in order", async function () {
    app = await startWebhookApp(db, {
      worker: { perEndpointConcurrency: 2, perEndpointQueued: 1 },
      startWorker: false,
    });
    const r = await receiver((_d, i) => (i % 7 === 3 ? 500 : { status: 200, delayMs: 20 }));
    await subscribe(r.url);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await operationThrough(["sent", "confirmed"]));
    // One read takes all 40: 3 stay in memory, the others go to the queue.
    app.webhooks.worker.start();
    await waitFor(async () => ((await queueRows()) > 30 ? true : undefined));
    await r.until((d) => new Set(d.map((x) => x.id)).size === 40, 30_000);
    // Each confirmed comes after its sent was delivered (its last try); none is lost.
    for (const id of ids) {
      const arrivals = r.deliveries.map((d, i) => ({ d, i })).filter(({ d }) => opOf(d) === id);
      const lastSent = Math.max(...arrivals.filter(({ d }) => d.json.type === "operation.sent").map(({ i }) => i));
      const firstConfirmed = Math.min(
        ...arrivals.filter(({ d }) => d.json.type === "operation.confirmed").map(({ i }) => i),
      );
      expect(firstConfirmed, id).to.be.above(lastSent);
    }
    await waitFor(async () => ((await queueRows()) === 0 ? true : undefined));
    const { rows } = await db.query<{ n: string | number }>(
      "SELECT count(*) AS n FROM webhook_delivery_log WHERE status = 'delivered'",
    );
    expect(Number(rows[0].n)).to.equal(40);
  });

  async function lastSeq(): Promise<number> {
    const { rows } = await db.query<{ seq: string | number }>("SELECT max(seq) AS seq FROM webhook_events");
    return Number(rows[0].seq);
  }
});
