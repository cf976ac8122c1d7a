/**
 * The /webhooks routes as a client meets them (on PGlite, in this process): access, the secret
 * shown once, changes and their audit events, the delivery log; the SSRF guard with
 * WEBHOOK_ALLOW_PRIVATE off, at creation and on the address each delivery connects to; and the
 * signature against standardwebhooks' own Webhook.sign.
 */
import { expect } from "chai";
import { Webhook } from "standardwebhooks";
import {
  DEFAULT_RETRY,
  newEndpointSecret,
  retryDelayMs,
  signatureHeader,
  UrlGuard,
  type Resolver,
} from "../../server/webhooks";
import type { JsonBody } from "../api/harness";
import { pgliteBackend, ROOT, startWebhookApp, waitFor, type WebhookApp } from "./fixture";
import { Receiver } from "./receiver";

describe("the /webhooks routes", function () {
  const backend = pgliteBackend();
  let store: Awaited<ReturnType<typeof backend.open>>;
  let app: WebhookApp;
  let guarded: WebhookApp;
  let receiver: Receiver;
  /** Names the guarded app resolves: a test's own DNS, so no lookup leaves this machine. */
  const names = new Map<string, string[]>();
  const resolver: Resolver = async (hostname) => {
    const addresses = names.get(hostname);
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };

  before(async function () {
    this.timeout(60_000);
    store = await backend.open();
    app = await startWebhookApp(store.db, { startWorker: false });
    guarded = await startWebhookApp(store.db, { allowPrivate: false, resolver });
    receiver = await Receiver.start();
  });

  after(async function () {
    await receiver?.close();
    await guarded?.close();
    await app?.close();
    await store?.release();
  });

  const post = (path: string, json: unknown, headers: Record<string, string> = ROOT) =>
    app.api.request("POST", path, { json, headers });
  const get = (path: string, headers: Record<string, string> = ROOT) => app.api.request("GET", path, { headers });
  const patch = (path: string, json: unknown) => app.api.request("PATCH", path, { json, headers: ROOT });

  async function lastAudit(): Promise<JsonBody> {
    return (await get("/audit-events?limit=1")).body.auditEvents[0] as JsonBody;
  }

  describe("access", function () {
    it("without a key: 401 UNAUTHORIZED with WWW-Authenticate, before the body is read", async function () {
      const res = await app.api.request("POST", "/webhooks", { raw: "{not json" });
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal("UNAUTHORIZED");
      expect(res.headers.get("www-authenticate")).to.match(/^Bearer/);
      expect((await app.api.get("/webhooks")).status).to.equal(401);
    });

    it("a key without webhooks:manage: 403 FORBIDDEN naming the scope", async function () {
      const made = await post("/access-keys", { name: "reader", scopes: ["nft:read"] });
      const res = await app.api.request("GET", "/webhooks", { headers: { authorization: `Bearer ${made.body.key}` } });
      expect(res.status).to.equal(403);
      expect(res.body.error.message).to.include("webhooks:manage");
    });

    it("a key sees and changes only the endpoints it made; the root key sees all", async function () {
      const made = await post("/access-keys", { name: "shop", scopes: ["webhooks:manage", "nft:read"] });
      const shop = { authorization: `Bearer ${made.body.key}` };
      const own = await post("/webhooks", { url: receiver.url, events: ["operation.confirmed"] }, shop);
      const root = await post("/webhooks", { url: receiver.url, events: ["operation.failed"] });
      const listed = (await get("/webhooks", shop)).body.webhooks as JsonBody[];
      expect(listed.map((w) => w.id)).to.deep.equal([own.body.id]);
      expect((await get(`/webhooks/${root.body.id}`, shop)).status).to.equal(404);
      const del = await app.api.request("DELETE", `/webhooks/${root.body.id}`, { headers: shop });
      expect(del.status).to.equal(404);
      const all = ((await get("/webhooks")).body.webhooks as JsonBody[]).map((w) => w.id);
      expect(all).to.include.members([own.body.id, root.body.id]);
    });

    it("GET /webhooks pages with limit (at most 500) and cursor, oldest first, without gaps or repeats (issue 35)", async function () {
      const made = await post("/access-keys", { name: "pager", scopes: ["webhooks:manage", "nft:read"] });
      const pager = { authorization: `Bearer ${made.body.key}` };
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await post("/webhooks", { url: receiver.url, events: ["operation.sent"] }, pager)).body.id);
      const walk = async (headers: Record<string, string>, limit: number) => {
        const walked: string[] = [];
        let cursor: string | undefined;
        do {
          const res = await get(`/webhooks?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`, headers);
          expect(res.status, res.text).to.equal(200);
          expect(res.body.webhooks.length).to.be.at.most(limit);
          walked.push(...(res.body.webhooks as JsonBody[]).map((w) => w.id as string));
          cursor = res.body.cursor;
        } while (cursor);
        return walked;
      };
      expect(await walk(pager, 2)).to.deep.equal(ids);
      expect(await walk(ROOT, 3)).to.deep.equal(
        ((await get("/webhooks?limit=500")).body.webhooks as JsonBody[]).map((w) => w.id),
      );
      for (const query of ["limit=0", "limit=501", "cursor=nope"])
        expect((await get(`/webhooks?${query}`)).status, query).to.equal(400);
    });
  });

  describe("endpoints", function () {
    it("POST answers 201 with the secret once: whsec_ and 32 random bytes; no later answer or audit event holds it", async function () {
      const res = await post("/webhooks", {
        url: receiver.url,
        events: ["operation.confirmed", "operation.failed", "operation.confirmed"],
        collections: ["0x5fbdb2315678afecb367f032d93f642f64180aa3"],
      });
      expect(res.status, res.text).to.equal(201);
      const { secret, id } = res.body as { secret: string; id: string };
      expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), "base64")).to.have.length(32);
      expect(res.body).to.deep.include({
        url: receiver.url,
        events: ["operation.confirmed", "operation.failed"],
        collections: ["0x5FbDB2315678afecb367f032d93F642f64180aa3"],
        enabled: true,
        disabledReason: null,
      });
      expect(await lastAudit()).to.include({ action: "webhook.created", targetType: "webhook", targetId: id });
      const later = [
        await get(`/webhooks/${id}`),
        await get("/webhooks"),
        await get("/audit-events?limit=50"),
        await patch(`/webhooks/${id}`, { events: ["operation.sent"] }),
      ];
      for (const answer of later) expect(answer.text).not.to.include(secret.slice(6));
      expect(later[0].body).not.to.have.property("secret");
    });

    it("refuses a bad body with 400 VALIDATION_ERROR naming the field", async function () {
      const cases: Array<[unknown, string]> = [
        [{ url: receiver.url, events: [] }, "events"],
        [{ url: receiver.url, events: ["operation.mined"] }, "events.0"],
        [{ url: "ftp://example.com/", events: ["operation.sent"] }, "url"],
        [{ url: "not a url", events: ["operation.sent"] }, "url"],
        [{ url: receiver.url, events: ["operation.sent"], collections: ["0x12"] }, "collections.0"],
        [{ url: receiver.url, events: ["operation.sent"], secret: "mine" }, "secret"],
      ];
      for (const [body, path] of cases) {
        const res = await post("/webhooks", body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal("VALIDATION_ERROR");
        expect((res.body.error.details as JsonBody[]).map((d) => d.path)).to.include(path);
      }
    });

    it("PATCH disables and enables it, changes events and filters; each change is an audit event", async function () {
      const { body } = await post("/webhooks", { url: receiver.url, events: ["operation.sent"] });
      const off = await patch(`/webhooks/${body.id}`, { enabled: false });
      expect(off.status, off.text).to.equal(200);
      expect(off.body).to.include({ enabled: false, disabledReason: "disabled through the API" });
      expect(await lastAudit()).to.include({ action: "webhook.disabled", targetId: body.id });
      const on = await patch(`/webhooks/${body.id}`, { enabled: true });
      expect(on.body).to.include({ enabled: true, disabledReason: null });
      expect(await lastAudit()).to.include({ action: "webhook.enabled" });
      const changed = await patch(`/webhooks/${body.id}`, {
        events: ["wallet.low_balance"],
        wallets: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
      });
      expect(changed.body).to.deep.include({
        events: ["wallet.low_balance"],
        wallets: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
      });
      const cleared = await patch(`/webhooks/${body.id}`, { wallets: null });
      expect(cleared.body).not.to.have.property("wallets");
      expect(await lastAudit()).to.include({ action: "webhook.updated" });
      expect((await patch("/webhooks/wh_nope", { enabled: false })).status).to.equal(404);
    });

    it("DELETE answers 204, then the endpoint is gone (404), with an audit event", async function () {
      const { body } = await post("/webhooks", { url: receiver.url, events: ["operation.sent"] });
      const res = await app.api.request("DELETE", `/webhooks/${body.id}`, { headers: ROOT });
      expect(res.status).to.equal(204);
      expect(await lastAudit()).to.include({ action: "webhook.deleted", targetId: body.id });
      expect((await get(`/webhooks/${body.id}`)).status).to.equal(404);
      expect((await app.api.request("DELETE", `/webhooks/${body.id}`, { headers: ROOT })).status).to.equal(404);
    });

    it("rotate-secret answers a new secret once and when the old one stops signing; an audit event without either", async function () {
      const { body } = await post("/webhooks", { url: receiver.url, events: ["operation.sent"] });
      const res = await post(`/webhooks/${body.id}/rotate-secret`, {});
      expect(res.status).to.equal(200);
      expect(res.body.secret).to.match(/^whsec_/);
      expect(Date.parse(res.body.previousSecretExpiresAt as string) - Date.now()).to.be.closeTo(86_400_000, 60_000);
      const audit = await lastAudit();
      expect(audit).to.include({ action: "webhook.secret-rotated", targetId: body.id });
      expect(JSON.stringify(audit)).not.to.include((res.body.secret as string).slice(6));
      expect(JSON.stringify(audit)).not.to.include((body.secret as string).slice(6));
    });

    it("the delivery log pages newest first with a cursor and filters by status", async function () {
      const { body } = await post("/webhooks", { url: receiver.url, events: ["operation.sent"] });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await post(`/webhooks/${body.id}/test`, {})).body.eventId as string);
      // This app's worker is stopped: the log has them, pending.
      const first = await get(`/webhooks/${body.id}/deliveries?limit=2`);
      expect(first.status, first.text).to.equal(200);
      expect((first.body.deliveries as JsonBody[]).map((d) => d.eventId)).to.deep.equal([ids[2], ids[1]]);
      expect(first.body.deliveries[0]).to.include({ type: "webhook.test", status: "pending" });
      const second = await get(`/webhooks/${body.id}/deliveries?limit=2&cursor=${first.body.cursor}`);
      expect((second.body.deliveries as JsonBody[]).map((d) => d.eventId)).to.deep.equal([ids[0]]);
      expect(second.body).not.to.have.property("cursor");
      const delivered = await get(`/webhooks/${body.id}/deliveries?status=delivered`);
      expect(delivered.body.deliveries).to.deep.equal([]);
      expect((await get(`/webhooks/${body.id}/deliveries?status=lost`)).status).to.equal(400);
    });
  });

  describe("the SSRF guard (WEBHOOK_ALLOW_PRIVATE off)", function () {
    const forbidden = [
      "http://127.0.0.1/",
      "http://169.254.169.254/latest/meta-data/",
      "http://10.0.0.1/",
      "http://localhost.test/", // resolves to 127.0.0.1 through this test's DNS
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://0.0.0.0/",
      "http://2130706433/", // 127.0.0.1 as a number
      "http://[fd00:ec2::254]/",
      "http://192.168.1.10/",
      "http://172.16.0.1/",
      "http://[fe80::1]/",
      "http://rebound.test/", // one of its addresses is private
    ];

    before(function () {
      names.set("localhost.test", ["127.0.0.1"]);
      names.set("rebound.test", ["93.184.216.34", "10.1.2.3"]);
    });

    for (const url of forbidden) {
      it(`refuses ${url} with 400 WEBHOOK_URL_FORBIDDEN, on POST and on PATCH`, async function () {
        const res = await guarded.api.request("POST", "/webhooks", {
          json: { url, events: ["operation.sent"] },
          headers: ROOT,
        });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error.code).to.equal("WEBHOOK_URL_FORBIDDEN");
        const { body } = await post("/webhooks", { url: receiver.url, events: ["operation.sent"] });
        const changed = await guarded.api.request("PATCH", `/webhooks/${body.id}`, { json: { url }, headers: ROOT });
        expect(changed.status).to.equal(400);
        expect(changed.body.error.code).to.equal("WEBHOOK_URL_FORBIDDEN");
      });
    }

    it("checks the address each delivery connects to: a name that resolved to a public address, then to 127.0.0.1, is refused before connecting", async function () {
      names.set("rebinding.test", ["93.184.216.34"]);
      const rebinding = `http://rebinding.test:${new URL(receiver.url).port}/hook`;
      const res = await guarded.api.request("POST", "/webhooks", {
        json: { url: rebinding, events: ["operation.sent"] },
        headers: ROOT,
      });
      expect(res.status, res.text).to.equal(201);
      names.set("rebinding.test", ["127.0.0.1"]); // DNS rebinding: the next lookup answers loopback
      const before = receiver.deliveries.length;
      await guarded.api.request("POST", `/webhooks/${res.body.id}/test`, { headers: ROOT });
      const log = await waitFor(async () => {
        const [d] = (await get(`/webhooks/${res.body.id}/deliveries`)).body.deliveries as JsonBody[];
        return d?.attempts >= 1 ? d : undefined;
      });
      expect(log.lastError).to.match(/forbidden address: 127\.0\.0\.1 is in a loopback range/);
      expect(log.status).to.equal("pending"); // tried again later: DNS may change back
      expect(receiver.deliveries.length, "nothing reached the receiver").to.equal(before);
    });

    it("checks IP-literal URLs at delivery too (stored before the guard was on)", async function () {
      const { body } = await post("/webhooks", { url: receiver.url, events: ["operation.sent"] });
      const before = receiver.deliveries.length;
      await guarded.api.request("POST", `/webhooks/${body.id}/test`, { headers: ROOT });
      const log = await waitFor(async () => {
        const [d] = (await get(`/webhooks/${body.id}/deliveries`)).body.deliveries as JsonBody[];
        return d?.attempts >= 1 ? d : undefined;
      });
      expect(log.lastError).to.match(/forbidden address: 127\.0\.0\.1/);
      expect(receiver.deliveries.length).to.equal(before);
    });

    it("with WEBHOOK_ALLOW_PRIVATE loopback and private addresses pass; link-local and metadata never do", function () {
      const open = new UrlGuard(true);
      const shut = new UrlGuard(false);
      for (const address of ["127.0.0.1", "::1", "10.0.0.1", "192.168.0.2", "fd12::1", "::ffff:10.0.0.1"]) {
        expect(open.refusal(address), address).to.equal(null);
        expect(shut.refusal(address), address).to.be.a("string");
      }
      for (const address of [
        "169.254.169.254",
        "fd00:ec2::254",
        "169.254.1.1",
        "fe80::1",
        "0.0.0.0",
        "::",
        "224.0.0.1",
      ])
        expect(open.refusal(address), address).to.be.a("string");
      for (const address of ["93.184.216.34", "2606:4700::1111"]) expect(shut.refusal(address), address).to.equal(null);
      expect(shut.refusal("::ffff:169.254.169.254")).to.match(/metadata/);
      expect(shut.refusal("64:ff9b::7f00:1"), "NAT64 of 127.0.0.1").to.be.a("string");
      expect(shut.refusal("2002:7f00:1::"), "6to4 of 127.0.0.1").to.be.a("string");
    });
  });

  describe("signing", function () {
    it("signs as standardwebhooks' Webhook.sign does, byte for byte", function () {
      const secret = newEndpointSecret();
      const body = JSON.stringify({
        type: "operation.confirmed",
        timestamp: "2026-01-01T00:00:00.000Z",
        data: { a: "é" },
      });
      const at = new Date(1_767_225_600_000);
      expect(signatureHeader([secret], "evt_1", at.getTime() / 1000, body)).to.equal(
        new Webhook(secret).sign("evt_1", at, body),
      );
    });
  });
});

describe("the retry schedule", function () {
  it("doubles from the base to the cap, each wait between half and all of it (equal jitter), for 24 h and more", function () {
    const policy = DEFAULT_RETRY;
    const lowest = (n: number) => retryDelayMs(policy, n, () => 0);
    const highest = (n: number) => retryDelayMs(policy, n, () => 1);
    expect([1, 2, 3, 4].map(highest)).to.deep.equal([5_000, 10_000, 20_000, 40_000]);
    expect([1, 2, 3, 4].map(lowest)).to.deep.equal([2_500, 5_000, 10_000, 20_000]);
    expect(highest(30)).to.equal(3_600_000);
    expect(lowest(60)).to.equal(1_800_000);
    expect(policy.windowMs).to.equal(24 * 3_600_000);
    // Even at the shortest waits, the retries of one day are few and far apart (not a storm).
    let spent = 0;
    let attempts = 0;
    while (spent < policy.windowMs) spent += lowest(++attempts);
    expect(attempts).to.be.within(20, 60);
  });
});
