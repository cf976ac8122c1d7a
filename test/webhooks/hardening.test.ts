/**
 * Webhook findings of the security review (issue 35, items 11-14), each as a user meets it, on
 * PGlite: a URL whose credentials do not decode, an attempt that throws, secrets sealed at rest
 * and re-sealed by a master key rotation, credentials masked in answers, and IPv4-compatible
 * IPv6 addresses refused with a message naming the rule and the setting.
 */
import { expect } from "chai";
import { AuditLog } from "../../server/access";
import { UrlGuard, type Resolver } from "../../server/webhooks";
import { MasterKey } from "../../server/wallets";
import { rotateMasterKey } from "../../server/wallets/rotation";
import type { JsonBody } from "../api/harness";
import { pgliteBackend, ROOT, startWebhookApp, waitFor, type WebhookApp } from "./fixture";
import { Receiver } from "./receiver";

describe("webhook hardening (PGlite)", function () {
  const backend = pgliteBackend();
  let store: Awaited<ReturnType<typeof backend.open>>;
  let app: WebhookApp | undefined;
  let receiver: Receiver;

  beforeEach(async function () {
    store = await backend.open();
    receiver = await Receiver.start();
  });

  afterEach(async function () {
    await app?.close();
    app = undefined;
    await receiver.close();
    await store.release();
  });

  const post = (path: string, json: unknown) => app!.api.request("POST", path, { json, headers: ROOT });
  const get = (path: string) => app!.api.request("GET", path, { headers: ROOT });
  const withCredentials = (credentials: string) => receiver.url.replace("http://", `http://${credentials}@`);

  async function lastDelivery(id: string): Promise<JsonBody | undefined> {
    return ((await get(`/webhooks/${id}/deliveries`)).body.deliveries as JsonBody[])[0];
  }

  it("11: a URL whose user or password is not valid percent-encoding is refused at creation and on PATCH (400 VALIDATION_ERROR)", async function () {
    app = await startWebhookApp(store.db, { startWorker: false });
    const bad = withCredentials("u:p%zz");
    const made = await post("/webhooks", { url: bad, events: ["operation.sent"] });
    expect(made.status, made.text).to.equal(400);
    expect(made.body.error.code).to.equal("VALIDATION_ERROR");
    expect((made.body.error.details as JsonBody[]).map((d) => d.path)).to.include("url");
    const { body } = await post("/webhooks", { url: receiver.url, events: ["operation.sent"] });
    const changed = await app.api.request("PATCH", `/webhooks/${body.id}`, { json: { url: bad }, headers: ROOT });
    expect(changed.status, changed.text).to.equal(400);
  });

  it("11: an attempt that throws (a URL stored before the check) is a failed attempt with its reason, retried with backoff, and failed when its window is over", async function () {
    app = await startWebhookApp(store.db);
    const { body } = await post("/webhooks", { url: receiver.url, events: ["operation.sent"] });
    await store.db.query("UPDATE webhook_endpoints SET url = $2 WHERE id = $1", [body.id, withCredentials("u:p%zz")]);
    await post(`/webhooks/${body.id}/test`, {});
    const retried = await waitFor(async () => {
      const d = await lastDelivery(body.id as string);
      return d && (d.attempts as number) >= 2 ? d : undefined;
    });
    expect(retried).to.include({ status: "pending" });
    expect(retried.lastError).to.match(/attempt failed/);
    expect(retried.nextAttemptAt).to.be.a("string");
    const log = retried.attemptLog as JsonBody[];
    expect(Date.parse(log[1].at as string) - Date.parse(log[0].at as string), "backoff").to.be.at.least(40);
    await store.db.query(
      "UPDATE webhook_deliveries SET retry_until = now() - interval '1 second' WHERE endpoint_id = $1",
      [body.id],
    );
    const failed = await waitFor(async () => {
      const d = await lastDelivery(body.id as string);
      return d?.status === "failed" ? d : undefined;
    });
    expect(failed.nextAttemptAt).to.equal(null);
    expect(receiver.deliveries).to.have.length(0);
  });

  it("12: secrets are sealed at rest under the master key; a rotation of the master key re-seals them, and deliveries still verify", async function () {
    const key = MasterKey.generate();
    // One endpoint made before sealing (no key), kept as given until a start with a key.
    app = await startWebhookApp(store.db, { startWorker: false });
    const older = (await post("/webhooks", { url: receiver.url, events: ["operation.sent"] })).body;
    await app.close();
    app = await startWebhookApp(store.db, { masterKey: key });
    const made = (await post("/webhooks", { url: receiver.url, events: ["operation.sent"] })).body;
    const rotated = (await post(`/webhooks/${made.id}/rotate-secret`, {})).body;
    const stored = async () =>
      JSON.stringify((await store.db.query("SELECT secret, previous_secret FROM webhook_endpoints")).rows);
    for (const secret of [older.secret, made.secret, rotated.secret] as string[])
      expect(await stored(), "a secret in the store").not.to.include(secret.slice(6));
    await post(`/webhooks/${older.id}/test`, {});
    await post(`/webhooks/${made.id}/test`, {});
    await receiver.until((d) => d.length === 2);
    await app.close();
    app = undefined;

    const next = MasterKey.generate();
    const actor = { keyId: null, keyName: "test", clientAddress: "127.0.0.1" };
    await rotateMasterKey(store.db, key, next, new AuditLog(store.db), actor);
    const resealed = await stored();
    for (const secret of [older.secret, made.secret, rotated.secret] as string[])
      expect(resealed).not.to.include(secret.slice(6));
    app = await startWebhookApp(store.db, { masterKey: next });
    await post(`/webhooks/${older.id}/test`, {});
    await post(`/webhooks/${made.id}/test`, {});
    await receiver.until((d) => d.length === 4);
    // Each delivery verifies under its endpoint's secrets: the older one's, the rotated one's two.
    const secretsOf = new Map([
      [older.id, [older.secret]],
      [made.id, [rotated.secret, made.secret]],
    ]);
    for (const delivery of receiver.deliveries)
      for (const secret of secretsOf.get(delivery.json.data.webhookId)!) Receiver.verify(secret as string, delivery);
  });

  it("13: answers mask a URL's user and password", async function () {
    app = await startWebhookApp(store.db, { startWorker: false });
    const url = withCredentials("shop-user:hunter2-password");
    const made = await post("/webhooks", { url, events: ["operation.sent"] });
    expect(made.status, made.text).to.equal(201);
    const answers = [made, await get(`/webhooks/${made.body.id}`), await get("/webhooks")];
    answers.push(await app.api.request("PATCH", `/webhooks/${made.body.id}`, { json: { url }, headers: ROOT }));
    for (const answer of answers) {
      expect(answer.text).not.to.include("shop-user");
      expect(answer.text).not.to.include("hunter2-password");
    }
    expect(made.body.url).to.equal(withCredentials("***:***"));
  });

  it("14: IPv4-compatible IPv6 addresses are refused like the IPv4 they embed; the 400 names the rule and WEBHOOK_ALLOW_PRIVATE, not the address", async function () {
    const resolver: Resolver = async (host) =>
      host === "inside.test" ? [{ address: "10.1.2.3", family: 4 }] : Promise.reject(new Error("ENOTFOUND"));
    app = await startWebhookApp(store.db, { allowPrivate: false, resolver, startWorker: false });
    for (const url of ["http://[::7f00:1]/", "http://[::a00:1]/", "http://inside.test/"]) {
      const res = await post("/webhooks", { url, events: ["operation.sent"] });
      expect(res.status, `${url}: ${res.text}`).to.equal(400);
      expect(res.body.error.code).to.equal("WEBHOOK_URL_FORBIDDEN");
      expect(res.body.error.message).to.match(/loopback|private/);
      expect(res.body.error.message).to.include("WEBHOOK_ALLOW_PRIVATE");
      for (const address of ["127.0.0.1", "10.0.0.1", "10.1.2.3", "7f00"]) expect(res.text).not.to.include(address);
    }
    const shut = new UrlGuard(false);
    expect(shut.refusal("::7f00:1")).to.match(/127\.0\.0\.1 is in a loopback range/);
    expect(shut.refusal("::a9fe:a9fe")).to.match(/metadata/);
    expect(new UrlGuard(true).refusal("::7f00:1"), "opened like 127.0.0.1").to.equal(null);
    expect(shut.refusal("::1")).to.match(/loopback/);
  });
});
