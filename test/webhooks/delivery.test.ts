/**
 * Webhook deliveries end to end on a real store (PGlite, then PostgreSQL), real HTTP receivers in
 * this process, and the /webhooks routes: signing checked by standardwebhooks' own
 * Webhook.verify, retries, 410, order, isolation, filters and key limits, the outbox written in
 * the change's own transaction (the operations trigger, emitEvent), and /metrics.
 * Operations are written to the store directly here (their chain side is in service.test.ts).
 */
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { Wallet, ZeroAddress } from "ethers";
import { Webhook } from "standardwebhooks";
import type { SqlDriver } from "../../server/db";
import { emitEvent, emitEvents } from "../../server/webhooks";
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
import { Receiver } from "./receiver";

const COLLECTION_A = Wallet.createRandom().address;
const COLLECTION_B = Wallet.createRandom().address;
const SENDER = Wallet.createRandom().address;

for (const backend of [pgliteBackend(), postgresBackend()] as Backend[]) {
  describe(`webhook deliveries on ${backend.name}`, function () {
    let store: Awaited<ReturnType<Backend["open"]>>;
    let app: WebhookApp;
    let db: SqlDriver;
    const receivers: Receiver[] = [];

    before(async function () {
      this.timeout(90_000);
      store = await backend.open();
      db = store.db;
      app = await startWebhookApp(db);
    });

    afterEach(async function () {
      // Each test's endpoints go with it, so the next test's events reach only its own.
      const { body } = await app.api.request("GET", "/webhooks", { headers: ROOT });
      for (const w of body.webhooks as JsonBody[])
        await app.api.request("DELETE", `/webhooks/${w.id}`, { headers: ROOT });
      await Promise.all(receivers.splice(0).map((r) => r.close()));
    });

    after(async function () {
      this.timeout(30_000);
      await app?.close();
      await store?.release();
      await backend.stop();
    });

    async function receiver(answer?: Parameters<typeof Receiver.start>[0]) {
      const r = await Receiver.start(answer);
      receivers.push(r);
      return r;
    }

    async function subscribe(url: string, body: JsonBody = {}, headers: Record<string, string> = ROOT) {
      const res = await app.api.request("POST", "/webhooks", {
        json: { url, events: ["operation.sent", "operation.confirmed"], ...body },
        headers,
      });
      expect(res.status, res.text).to.equal(201);
      return res.body as { id: string; secret: string } & JsonBody;
    }

    /**
     * Sends a marker event (a wallet.low_balance about a wallet of its own) to an endpoint of its
     * own through the same worker, and waits for it: the worker has then gone past every event
     * written before it, matching each to the endpoints that take it. What a check that nothing
     * more arrives waits for, instead of a fixed sleep that a slow worker outlasts.
     */
    async function workerWentPast(): Promise<void> {
      const marker = await receiver();
      const wallet = Wallet.createRandom().address;
      await subscribe(marker.url, { events: ["wallet.low_balance"], wallets: [wallet] });
      await db.transaction((tx) => emitEvent(tx, { type: "wallet.low_balance", data: { address: wallet }, wallet }));
      await marker.until((d) => d.length === 1, 15_000, "the marker event");
    }

    async function deliveriesOf(id: string, query = ""): Promise<JsonBody[]> {
      const res = await app.api.request("GET", `/webhooks/${id}/deliveries${query}`, { headers: ROOT });
      expect(res.status, res.text).to.equal(200);
      return res.body.deliveries as JsonBody[];
    }

    // Each operation its own nonce and transactions: the store refuses two on one (migration 33, issue 51).
    const nonces = new Map<string, number>();
    const hashOf = (id: string, n: number) => `0x0${n}${id.replace(/-/g, "")}`;
    /**
     * An operation written as the engine writes it (inserted queued, unless `insertedAs`); each
     * later status in its own transaction.
     */
    async function operationThrough(
      statuses: string[],
      fields: { contract?: string; accessKeyId?: string; insertedAs?: string; from?: string } = {},
    ) {
      const id = randomUUID();
      await db.query(
        `INSERT INTO operations (id, chain_id, from_address, operation, contract_address, fingerprint, status, nonce,
           transactions, access_key_id)
         VALUES ($1, '31337', $2, 'mint', $3, 'f', $6, $7, $4, $5)`,
        [
          id,
          fields.from ?? SENDER,
          fields.contract ?? COLLECTION_A,
          JSON.stringify([{ hash: hashOf(id, 1), raw: "0x" }]),
          fields.accessKeyId ?? null,
          fields.insertedAs ?? "queued",
          7 + nonces.size,
        ],
      );
      nonces.set(id, 7 + nonces.size);
      for (const status of statuses) {
        if (status === "replaced") {
          await db.query(`UPDATE operations SET transactions = transactions || $2::jsonb WHERE id = $1`, [
            id,
            JSON.stringify([{ hash: hashOf(id, 2), raw: "0x" }]),
          ]);
        } else if (status === "confirmed") {
          await db.query(
            `UPDATE operations SET status = 'confirmed', block_number = 12, result = '{"tokenIds":["1"]}' WHERE id = $1`,
            [id],
          );
        } else {
          await db.query("UPDATE operations SET status = $2 WHERE id = $1", [id, status]);
        }
      }
      return id;
    }

    it("a test event is signed per Standard Webhooks: Webhook.verify accepts it, and refuses it with one byte of the body changed", async function () {
      const r = await receiver();
      const endpoint = await subscribe(r.url);
      const sent = await app.api.request("POST", `/webhooks/${endpoint.id}/test`, { headers: ROOT });
      expect(sent.status, sent.text).to.equal(202);
      const [delivery] = await r.until((d) => d.length === 1);
      expect(delivery.id).to.equal(sent.body.eventId);
      expect(delivery.signature).to.match(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(Number(delivery.timestamp)).to.be.closeTo(Date.now() / 1000, 30);
      expect(Receiver.verify(endpoint.secret, delivery)).to.deep.include({ type: "webhook.test" });
      const tampered = delivery.body.replace("test", "tesT");
      expect(() => new Webhook(endpoint.secret).verify(tampered, delivery.headers)).to.throw(/signature/i);
      expect(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 1).toString("base64")}`).verify(delivery.body, delivery.headers),
      ).to.throw();
    });

    it("a receiver answering 500 three times then 200 gets the event 4 times under one webhook-id; the log shows 4 attempts", async function () {
      const r = await receiver((_d, i) => (i < 3 ? 500 : 200));
      const endpoint = await subscribe(r.url);
      const opId = await operationThrough(["sent"]);
      await r.until((d) => d.length === 4, 15_000);
      expect(new Set(r.deliveries.map((d) => d.id)).size).to.equal(1);
      expect(r.deliveries.map((d) => d.body)).to.satisfy((bodies: string[]) => bodies.every((b) => b === bodies[0]));
      for (const d of r.deliveries) Receiver.verify(endpoint.secret, d);
      const log = await waitFor(async () => {
        const [d] = await deliveriesOf(endpoint.id);
        return d?.status === "delivered" ? d : undefined;
      });
      expect(log).to.include({ eventId: r.deliveries[0].id, type: "operation.sent", attempts: 4, lastStatus: 200 });
      expect((log.attemptLog as JsonBody[]).map((a) => a.status)).to.deep.equal([500, 500, 500, 200]);
      expect(r.deliveries[0].json.data).to.include({ operationId: opId, status: "sent" });
      // Retries wait (backoff from 100 ms here, with jitter: at least half of it).
      const gaps = r.deliveries.slice(1).map((d, i) => d.at - r.deliveries[i].at);
      expect(Math.min(...gaps)).to.be.at.least(40);
    });

    it("a redirect is not followed: the attempt fails as a redirect and is tried again at the endpoint itself", async function () {
      const elsewhere = await receiver();
      const r = await receiver((_d, i) => (i < 2 ? { status: 302, headers: { location: elsewhere.url } } : 200));
      const endpoint = await subscribe(r.url);
      await operationThrough(["sent"]);
      await r.until((d) => d.length === 3, 15_000);
      const log = await waitFor(async () => {
        const [d] = await deliveriesOf(endpoint.id);
        return d?.status === "delivered" ? d : undefined;
      });
      expect((log.attemptLog as JsonBody[]).map((a) => [a.status, a.error ?? null])).to.deep.equal([
        [302, "redirect not followed"],
        [302, "redirect not followed"],
        [200, null],
      ]);
      expect(elsewhere.deliveries, "the redirect's target").to.have.length(0);
    });

    it("a delivery still failing when its retry window is over is marked failed, and tried no more", async function () {
      const r = await receiver(() => 500);
      const endpoint = await subscribe(r.url);
      await operationThrough(["sent"]);
      await r.until((d) => d.length >= 1);
      // Its 24 h (60 s here) are over: the next failed attempt is its last.
      await waitFor(async () => {
        const { rowCount } = await db.query(
          `UPDATE webhook_deliveries SET retry_until = now() - interval '1 second' WHERE endpoint_id = $1`,
          [endpoint.id],
        );
        return rowCount > 0 ? true : undefined;
      });
      const log = await waitFor(async () => {
        const [d] = await deliveriesOf(endpoint.id);
        return d?.status === "failed" ? d : undefined;
      });
      expect(log).to.include({ lastStatus: 500, nextAttemptAt: null });
      const tries = r.deliveries.length;
      await workerWentPast();
      expect(r.deliveries, "no attempt after it failed").to.have.length(tries);
      expect((await deliveriesOf(endpoint.id))[0]).to.include({ status: "failed", attempts: log.attempts });
    });

    it("an operation's events reach the endpoint in order, a later one waiting while an earlier one is retried", async function () {
      const r = await receiver((d, i) => (i === 0 ? 503 : 200));
      await subscribe(r.url, {
        events: ["operation.sent", "operation.replaced", "operation.confirmed", "operation.failed"],
      });
      const confirmed = await operationThrough(["sent", "replaced", "confirmed"]);
      const failed = await operationThrough(["sent", "failed"]);
      await r.until((d) => d.filter((x) => x.json.data.operationId === confirmed).length === 4, 15_000);
      await r.until((d) => d.filter((x) => x.json.data.operationId === failed).length === 2, 15_000);
      const typesOf = (id: string) => [
        ...new Map(r.deliveries.filter((d) => d.json.data.operationId === id).map((d) => [d.id, d.json.type])).values(),
      ];
      expect(typesOf(confirmed)).to.deep.equal(["operation.sent", "operation.replaced", "operation.confirmed"]);
      expect(typesOf(failed)).to.deep.equal(["operation.sent", "operation.failed"]);
      const last = r.deliveries.filter((d) => d.json.data.operationId === confirmed).at(-1)!;
      expect(last.json.data).to.deep.include({
        operationId: confirmed,
        operation: "mint",
        status: "confirmed",
        nonce: nonces.get(confirmed),
        blockNumber: 12,
        transactionHash: hashOf(confirmed, 2),
        transactionHashes: [hashOf(confirmed, 1), hashOf(confirmed, 2)],
        result: { tokenIds: ["1"] },
      });
    });

    it("writes no event while no enabled endpoint takes it, and none for the service's own nonce fills", async function () {
      const before = await eventCount();
      await operationThrough(["sent", "confirmed"]);
      expect(await eventCount()).to.equal(before);
      const r = await receiver();
      const endpoint = await subscribe(r.url, { events: ["operation.confirmed"] });
      await operationThrough(["sent"]);
      expect(await eventCount(), "operation.sent is not subscribed").to.equal(before);
      await app.api.request("PATCH", `/webhooks/${endpoint.id}`, { json: { enabled: false }, headers: ROOT });
      await operationThrough(["sent", "confirmed"]);
      expect(await eventCount(), "the endpoint is disabled").to.equal(before);
      await app.api.request("PATCH", `/webhooks/${endpoint.id}`, { json: { enabled: true }, headers: ROOT });
      const fill = randomUUID();
      await db.query(
        `INSERT INTO operations (id, chain_id, from_address, operation, fingerprint, status) VALUES ($1, '31337', $2, 'nonceFill', 'f', 'confirmed')`,
        [fill, SENDER],
      );
      expect(await eventCount(), "a nonce fill").to.equal(before);
    });

    it("an operation inserted final reports its event from the insert; one inserted queued reports nothing", async function () {
      const r = await receiver();
      await subscribe(r.url, { events: ["operation.sent", "operation.failed"] });
      const before = await eventCount();
      await operationThrough([]);
      expect(await eventCount(), "a queued insert").to.equal(before);
      const failed = await operationThrough([], { insertedAs: "failed" });
      expect(await eventCount()).to.equal(before + 1);
      await r.until((d) => d.length === 1);
      expect(r.deliveries[0].json).to.deep.include({ type: "operation.failed" });
      expect(r.deliveries[0].json.data).to.deep.include({ operationId: failed, status: "failed" });
    });

    it("410 Gone fails the delivery at once and disables the endpoint, with an audit event", async function () {
      const r = await receiver(() => 410);
      const endpoint = await subscribe(r.url);
      await operationThrough(["sent"]);
      await r.until((d) => d.length === 1);
      const view = await waitFor(async () => {
        const res = await app.api.request("GET", `/webhooks/${endpoint.id}`, { headers: ROOT });
        return res.body.enabled === false ? res.body : undefined;
      });
      expect(view.disabledReason).to.match(/410/);
      const [delivery] = await deliveriesOf(endpoint.id);
      expect(delivery).to.include({ status: "failed", attempts: 1, lastStatus: 410 });
      const audit = await app.api.request("GET", "/audit-events?limit=5", { headers: ROOT });
      expect(audit.body.auditEvents[0]).to.include({ action: "webhook.disabled", targetId: endpoint.id });
      await operationThrough(["sent"]);
      await workerWentPast();
      expect(r.deliveries).to.have.length(1);
    });

    it("a receiver that never answers does not delay a healthy one's deliveries (measured)", async function () {
      this.timeout(30_000);
      const healthy = await receiver();
      await subscribe(healthy.url);
      const alone = await delaysOf(healthy, 40);
      const dead = await receiver(() => "hold");
      await subscribe(dead.url);
      const beside = await delaysOf(healthy, 40);
      console.log(
        `      isolation (${backend.name}): healthy endpoint, 40 events: p50/max ${alone.p50}/${alone.max} ms alone, ${beside.p50}/${beside.max} ms beside a dead one holding ${dead.deliveries.length} requests`,
      );
      expect(dead.deliveries.length, "the dead endpoint was being tried").to.be.at.least(1);
      expect(beside.max, "max delay beside the dead endpoint").to.be.below(Math.max(1_000, alone.max * 3));
    });

    it("an endpoint that never answers does not delay another on the same host: each has sockets of its own", async function () {
      this.timeout(40_000);
      // One receiver, two endpoints under two paths: /hook/slow never answers, /hook/fast at once.
      const host = await receiver((d) => (d.path.endsWith("/slow") ? "hold" : 200));
      await subscribe(`${host.url}/slow`);
      const slow = () => host.deliveries.filter((d) => d.path.endsWith("/slow"));
      // The slow one first holds 32 requests: as many sockets as one host had for all its endpoints.
      for (let i = 0; i < 40; i++) await operationThrough(["sent"]);
      await host.until(() => slow().length >= 32, 15_000, "32 requests held by the slow endpoint");
      await subscribe(`${host.url}/fast`);
      const fast = () => host.deliveries.filter((d) => d.path.endsWith("/fast"));
      const sentAt = new Map<string, number>();
      for (let i = 0; i < 20; i++) {
        const id = await operationThrough([]);
        sentAt.set(id, Date.now());
        await db.query("UPDATE operations SET status = 'sent' WHERE id = $1", [id]);
      }
      await host.until(() => fast().length >= 20, 30_000, "the fast endpoint's deliveries");
      const max = Math.max(...fast().map((d) => d.at - sentAt.get(d.json.data.operationId as string)!));
      console.log(
        `      same host (${backend.name}): the fast endpoint's max delay ${max} ms over 20 events, beside one holding ${slow().length} requests`,
      );
      expect(max, "max delay of the fast endpoint").to.be.below(2_000);
    });

    it("nine endpoints that never answer, each holding its slots, do not delay a healthy one", async function () {
      this.timeout(40_000);
      const healthy = await receiver();
      await subscribe(healthy.url);
      const dead: Receiver[] = [];
      for (let i = 0; i < 9; i++) {
        dead.push(await receiver(() => "hold"));
        await subscribe(dead[i].url);
      }
      // 70 events: each dead endpoint takes its 64 (32 in flight, 32 queued), 576 in all.
      for (let i = 0; i < 70; i++) await operationThrough(["sent"]);
      for (const r of dead) await r.until((d) => d.length >= 32, 15_000, "32 requests held by a dead endpoint");
      const { max } = await delaysOf(healthy, 40);
      const held = dead.reduce((n, r) => n + r.deliveries.length, 0);
      console.log(
        `      nine dead endpoints (${backend.name}): the healthy one's max delay ${max} ms over 40 events, beside ${held} requests held`,
      );
      expect(max, "max delay of the healthy endpoint").to.be.below(2_000);
    });

    it("an endpoint receives only the events its creating key could read; none once that key is revoked", async function () {
      const made = await app.api.request("POST", "/access-keys", {
        json: { name: "shop", scopes: ["webhooks:manage", "nft:read"], collections: [COLLECTION_A] },
        headers: ROOT,
      });
      expect(made.status, made.text).to.equal(201);
      const key = { authorization: `Bearer ${made.body.key}` };
      const r = await receiver();
      const outside = await app.api.request("POST", "/webhooks", {
        json: { url: r.url, events: ["operation.sent"], collections: [COLLECTION_B] },
        headers: key,
      });
      expect(outside.status, outside.text).to.equal(403);
      await subscribe(r.url, { events: ["operation.sent"] }, key);
      const onA = await operationThrough(["sent"], { contract: COLLECTION_A });
      const onB = await operationThrough(["sent"], { contract: COLLECTION_B });
      const ownOnB = await operationThrough(["sent"], { contract: COLLECTION_B, accessKeyId: made.body.id });
      await r.until((d) => d.length >= 2);
      await workerWentPast();
      const ids = r.deliveries.map((d) => d.json.data.operationId);
      expect(ids).to.have.members([onA, ownOnB]);
      expect(ids).not.to.include(onB);

      await app.api.request("DELETE", `/access-keys/${made.body.id}`, { headers: ROOT });
      await operationThrough(["sent"], { contract: COLLECTION_A });
      await workerWentPast();
      expect(r.deliveries, "nothing after the key is revoked").to.have.length(2);
    });

    it("emitEvent writes wallet.low_balance and collection.transfer with the caller's transaction: committed they arrive, rolled back they never exist", async function () {
      const r = await receiver();
      const wallet = Wallet.createRandom().address;
      await subscribe(r.url, { events: ["wallet.low_balance", "collection.transfer"] });
      const lowBalance = { address: wallet, label: "treasury", balance: "900", lowBalance: "1000" };
      const transfer = {
        contractAddress: COLLECTION_A,
        tokenId: "5",
        from: SENDER,
        to: wallet,
        blockNumber: 40,
        transactionHash: "0xab",
      };
      let low: string | null = null;
      await db.transaction(async (tx) => {
        low = await emitEvent(tx, { type: "wallet.low_balance", data: lowBalance, wallet });
      });
      await db
        .transaction(async (tx) => {
          await emitEvent(tx, {
            type: "collection.transfer",
            data: { ...transfer, tokenId: "6" },
            collection: COLLECTION_A,
          });
          throw new Error("the index change failed");
        })
        .catch(() => undefined);
      await db.transaction((tx) =>
        emitEvent(tx, {
          type: "collection.transfer",
          data: transfer,
          collection: COLLECTION_A,
          orderKey: `${COLLECTION_A}:5`,
        }),
      );
      await r.until((d) => d.length === 2);
      await sleep(200);
      expect(r.deliveries.map((d) => d.json.type)).to.have.members(["wallet.low_balance", "collection.transfer"]);
      expect(r.ofType("wallet.low_balance")[0].id).to.equal(low);
      expect(r.ofType("wallet.low_balance")[0].json.data).to.deep.equal(lowBalance);
      expect(r.ofType("collection.transfer")[0].json.data).to.deep.equal(transfer);
    });

    it("filters: an endpoint with a collections filter receives only events about those collections", async function () {
      const r = await receiver();
      await subscribe(r.url, { events: ["operation.sent", "wallet.low_balance"], collections: [COLLECTION_B] });
      const onB = await operationThrough(["sent"], { contract: COLLECTION_B });
      await operationThrough(["sent"], { contract: COLLECTION_A });
      await db.transaction((tx) =>
        emitEvent(tx, { type: "wallet.low_balance", data: { address: SENDER }, wallet: SENDER }),
      );
      await r.until((d) => d.length === 1);
      await workerWentPast();
      expect(r.deliveries.map((d) => d.json.data.operationId)).to.deep.equal([onB]);
    });

    it("filters: a wallets filter takes the transfers to or from those wallets, and operations they send", async function () {
      const r = await receiver();
      const mine = Wallet.createRandom().address;
      await subscribe(r.url, { events: ["operation.sent", "collection.transfer"], wallets: [mine] });
      const transfer = (from: string, to: string, tokenId: string) => ({
        type: "collection.transfer" as const,
        data: { collection: COLLECTION_A, tokenId, from, to },
        collection: COLLECTION_A.toLowerCase(),
        orderKey: `token:${COLLECTION_A.toLowerCase()}:${tokenId}`,
      });
      const other = Wallet.createRandom().address;
      await db.transaction((tx) =>
        emitEvents(tx, [
          transfer(ZeroAddress, mine, "1"),
          transfer(mine, other, "2"),
          transfer(ZeroAddress, other, "3"),
        ]),
      );
      await operationThrough(["sent"], { from: mine });
      await operationThrough(["sent"]);
      await r.until((d) => d.length >= 3);
      await workerWentPast();
      expect(r.ofType("collection.transfer").map((d) => d.json.data.tokenId)).to.have.members(["1", "2"]);
      expect(r.ofType("operation.sent")).to.have.length(1);
    });

    it("after a rotation each delivery carries two signatures, the new and the old secret each verifying it, for 24 h", async function () {
      const r = await receiver();
      const endpoint = await subscribe(r.url);
      const rotated = await app.api.request("POST", `/webhooks/${endpoint.id}/rotate-secret`, { headers: ROOT });
      expect(rotated.status, rotated.text).to.equal(200);
      expect(rotated.body.secret)
        .to.match(/^whsec_/)
        .and.not.equal(endpoint.secret);
      const expires = Date.parse(rotated.body.previousSecretExpiresAt as string);
      expect(expires - Date.now()).to.be.closeTo(24 * 3600_000, 60_000);
      await app.api.request("POST", `/webhooks/${endpoint.id}/test`, { headers: ROOT });
      const [delivery] = await r.until((d) => d.length === 1);
      expect(delivery.signature.split(" ")).to.have.length(2);
      Receiver.verify(rotated.body.secret as string, delivery);
      Receiver.verify(endpoint.secret, delivery);
    });

    it("a second rotation within 24 h keeps the first secret signing too, until its own 24 h are over", async function () {
      const r = await receiver();
      const endpoint = await subscribe(r.url);
      const rotate = async () => {
        const res = await app.api.request("POST", `/webhooks/${endpoint.id}/rotate-secret`, { headers: ROOT });
        expect(res.status, res.text).to.equal(200);
        return res.body.secret as string;
      };
      const second = await rotate();
      const third = await rotate();
      await app.api.request("POST", `/webhooks/${endpoint.id}/test`, { headers: ROOT });
      const [delivery] = await r.until((d) => d.length === 1);
      expect(delivery.signature.split(" ")).to.have.length(3);
      for (const secret of [third, second, endpoint.secret]) Receiver.verify(secret, delivery);

      // The first secret's 24 h are over (its time moved back): it no longer signs, the second does.
      await db.query(
        `UPDATE webhook_endpoints SET previous_secret = jsonb_set(previous_secret, '{1,until}', to_jsonb(now() - interval '1 second'))
         WHERE id = $1`,
        [endpoint.id],
      );
      await app.api.request("POST", `/webhooks/${endpoint.id}/test`, { headers: ROOT });
      const [, later] = await r.until((d) => d.length === 2);
      expect(later.signature.split(" ")).to.have.length(2);
      for (const secret of [third, second]) Receiver.verify(secret, later);
      expect(() => Receiver.verify(endpoint.secret, later)).to.throw();
    });

    it("a manual retry sends a delivered event again under the same webhook-id", async function () {
      const r = await receiver();
      const endpoint = await subscribe(r.url);
      const { body } = await app.api.request("POST", `/webhooks/${endpoint.id}/test`, { headers: ROOT });
      await r.until((d) => d.length === 1);
      await waitFor(async () => ((await deliveriesOf(endpoint.id))[0]?.status === "delivered" ? true : undefined));
      const retried = await app.api.request("POST", `/webhooks/${endpoint.id}/deliveries/${body.eventId}/retry`, {
        headers: ROOT,
      });
      expect(retried.status, retried.text).to.equal(202);
      expect(retried.body).to.include({ eventId: body.eventId, status: "pending" });
      await r.until((d) => d.length === 2);
      expect(r.deliveries[1].id).to.equal(body.eventId);
      const unknown = await app.api.request("POST", `/webhooks/${endpoint.id}/deliveries/evt_nope/retry`, {
        headers: ROOT,
      });
      expect(unknown.status).to.equal(404);
    });

    it("/metrics counts deliveries by event type and outcome, and the age of the oldest undelivered event (to an enabled endpoint)", async function () {
      const r = await receiver((_d, i) => (i === 0 ? 500 : 200));
      await subscribe(r.url);
      const dead = await receiver(() => "hold");
      const held = await subscribe(dead.url);
      await operationThrough(["sent"]);
      await r.until((d) => d.length === 2);
      const metric = async (series: string) =>
        Number(
          (await app.api.get("/metrics")).text
            .split("\n")
            .find((l) => l.startsWith(`${series} `))
            ?.split(" ")[1],
        );
      // The delivered outcome is counted once its answer is in, just after the receiver noted it.
      const delivered = 'webhook_deliveries_total{type="operation.sent",outcome="delivered"}';
      await waitFor(async () => ((await metric(delivered)) >= 1 ? true : undefined));
      expect(await metric('webhook_deliveries_total{type="operation.sent",outcome="retrying"}')).to.be.at.least(1);
      const age = "webhook_oldest_undelivered_event_age_seconds";
      await waitFor(async () => ((await metric(age)) > 0.2 ? true : undefined));
      expect(await metric(age), "the held delivery").to.be.above(0.2);
      // Disabled, its deliveries wait for it to be enabled again: no longer an age that only grows.
      const off = await app.api.request("PATCH", `/webhooks/${held.id}`, { json: { enabled: false }, headers: ROOT });
      expect(off.status, off.text).to.equal(200);
      // Other endpoints of the shared app may still be sending this test's events for a moment; the
      // held one, were it counted, would only grow.
      await waitFor(async () => ((await metric(age)) === 0 ? true : undefined));
      expect(await metric(age)).to.equal(0);
    });

    it("forgets events older than 30 days that wait for nothing, with their log; keeps one still pending", async function () {
      const r = await receiver((_d, i) => (i === 0 ? 200 : "hold"));
      const endpoint = await subscribe(r.url);
      const done = await operationThrough(["sent"]);
      await r.until((d) => d.some((x) => x.json.data.operationId === done));
      await waitFor(async () => ((await deliveriesOf(endpoint.id))[0]?.status === "delivered" ? true : undefined));
      const waiting = await operationThrough(["sent"]);
      await r.until((d) => d.some((x) => x.json.data.operationId === waiting)); // held: still pending
      await db.query("UPDATE webhook_events SET created_at = now() - interval '31 days' WHERE operation_id = ANY($1)", [
        [done, waiting],
      ]);
      expect(await app.webhooks.outbox.prune(30, 100)).to.equal(1);
      const left = await db.query<{ operation_id: string }>(
        "SELECT operation_id FROM webhook_events WHERE operation_id = ANY($1)",
        [[done, waiting]],
      );
      expect(left.rows.map((row) => row.operation_id)).to.deep.equal([waiting]);
      expect((await deliveriesOf(endpoint.id)).map((d) => d.status)).to.deep.equal(["pending"]);
    });

    async function eventCount(): Promise<number> {
      const { rows } = await db.query<{ n: string | number }>("SELECT count(*) AS n FROM webhook_events");
      return Number(rows[0].n);
    }

    /** Emits `n` test-free operation events and measures each one's delay to `r`. */
    async function delaysOf(r: Receiver, n: number): Promise<{ p50: number; max: number }> {
      const start = r.deliveries.length;
      const sentAt = new Map<string, number>();
      for (let i = 0; i < n; i++) {
        const id = await operationThrough([]);
        sentAt.set(id, Date.now());
        await db.query("UPDATE operations SET status = 'sent' WHERE id = $1", [id]);
      }
      // The delays of these n alone: an earlier event still arriving is no measurement of them.
      const measured = (d: typeof r.deliveries) =>
        d.slice(start).filter((x) => sentAt.has(x.json.data.operationId as string));
      await r.until((d) => measured(d).length >= n, 15_000);
      const delays = measured(r.deliveries)
        .map((d) => d.at - sentAt.get(d.json.data.operationId as string)!)
        .sort((a, b) => a - b);
      return { p50: delays[Math.floor(delays.length / 2)], max: delays[delays.length - 1] };
    }
  });
}
