/**
 * The delivery queue on both stores, as a user relies on it: nothing lost across a stop, nothing
 * sent twice that was delivered, the events of one operation in order past what a worker holds in
 * memory, the delivery log showing what is in flight, and an endpoint disabled meanwhile (even
 * disabled and enabled again at once) getting what it took once it is enabled again.
 * Real stores, real HTTP receivers, operations written to the store as the engine writes them.
 */
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Wallet } from "ethers";
import type { SqlDriver } from "../../server/db";
import type { JsonBody } from "../api/harness";
import {
  pgliteBackend,
  postgresBackend,
  ROOT,
  sleep,
  startWebhookApp,
  waitFor,
  type Backend,
  type WebhookApp,
} from "./fixture";
import { Receiver, type Answer, type Delivery } from "./receiver";

const COLLECTION = Wallet.createRandom().address;
const SENDER = Wallet.createRandom().address;
for (const backend of [pgliteBackend(), postgresBackend()] as Backend[]) {
  describe(`the webhook delivery queue on ${backend.name}`, function () {
    let store: Awaited<ReturnType<Backend["open"]>>;
    let db: SqlDriver;
    let app: WebhookApp | undefined;
    const receivers: Receiver[] = [];

    beforeEach(async function () {
      this.timeout(90_000);
      store = await backend.open();
      db = store.db;
    });

    afterEach(async function () {
      await app?.close();
      app = undefined;
      await Promise.all(receivers.splice(0).map((r) => r.close()));
      await store.release();
    });

    after(async function () {
      await backend.stop();
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

    // Each operation its own nonce and transaction: the store refuses two on one (migration 33, issue 51).
    let nextNonce = 7;
    /** An operation written as the engine writes it: queued, then each status in its own statement. */
    async function operationThrough(statuses: string[]): Promise<string> {
      const id = randomUUID();
      await db.query(
        `INSERT INTO operations (id, chain_id, from_address, operation, contract_address, fingerprint, status, nonce, transactions)
       VALUES ($1, '31337', $2, 'mint', $3, 'f', 'queued', $4, $5::jsonb)`,
        [id, SENDER, COLLECTION, nextNonce++, JSON.stringify([{ hash: `0x${id.replace(/-/g, "")}`, raw: "0x" }])],
      );
      for (const status of statuses) await db.query("UPDATE operations SET status = $2 WHERE id = $1", [id, status]);
      return id;
    }

    async function queueRows(): Promise<number> {
      const { rows } = await db.query<{ n: string | number }>("SELECT count(*) AS n FROM webhook_deliveries");
      return Number(rows[0].n);
    }

    const opOf = (d: Delivery) => d.json.data.operationId as string;

    it("the delivery log shows a delivery in flight as pending", async function () {
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
      // The held delivery is leased; the four after it are in the log.
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
      await sleep(300);
      expect(r.deliveries).to.have.length(0);
      expect((await patch(true)).status).to.equal(200);
      await r.until((d) => d.length === 1);
      await sleep(500);
      expect(r.deliveries.map(opOf)).to.deep.equal([taken]);
    });

    it("disabled and enabled again quickly, before the worker sent what it took: that arrives, and nothing written while it was disabled", async function () {
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
      // All 40 are queued; the worker holds 3 at a time.
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
  });
}
