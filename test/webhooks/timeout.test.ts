/**
 * The delivery timeout (10 s in the service; 300 ms here) on a real PGlite store and a real HTTP
 * receiver that never answers: each attempt fails as a timeout in the delivery log and is tried
 * again; and an endpoint that stopped answering gets one attempt at a time, so that it holds one
 * of the process's slots, not its 64.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { emitEvents } from "../../server/webhooks";
import type { JsonBody } from "../api/harness";
import { pgliteBackend, ROOT, sleep, startWebhookApp, waitFor, type WebhookApp } from "./fixture";
import { Receiver } from "./receiver";

const backend = pgliteBackend();

describe("webhook delivery timeout (PGlite, 300 ms)", function () {
  this.timeout(60_000);
  let store: Awaited<ReturnType<typeof backend.open>>;
  let app: WebhookApp;
  let receiver: Receiver;

  before(async function () {
    store = await backend.open();
    app = await startWebhookApp(store.db, { timeoutMs: 300 });
    receiver = await Receiver.start(() => "hold");
  });

  after(async function () {
    await app?.close();
    await receiver?.close();
    await store?.release();
    await backend.stop();
  });

  it("an attempt not answered within the timeout fails as such and is tried again; meanwhile one attempt at a time", async function () {
    const made = await app.api.request("POST", "/webhooks", {
      json: { url: receiver.url, events: ["collection.transfer"] },
      headers: ROOT,
    });
    expect(made.status, made.text).to.equal(201);
    const collection = Wallet.createRandom().address.toLowerCase();
    // Ten events of ten tokens (no order between them): the first wave sends all ten at once.
    await store.db.transaction((tx) =>
      emitEvents(
        tx,
        Array.from({ length: 10 }, (_, i) => ({
          type: "collection.transfer" as const,
          data: { tokenId: String(i) },
          collection,
          orderKey: `token:${collection}:${i}`,
        })),
      ),
    );
    await receiver.until((d) => d.length >= 10, 5_000, "the first wave");
    // Past the first wave's timeouts: from then on, at most one request open at any moment.
    await sleep(400);
    const before = receiver.deliveries.length;
    let most = 0;
    for (const until = Date.now() + 2_000; Date.now() < until; await sleep(10)) most = Math.max(most, receiver.holding);
    expect(receiver.deliveries.length - before, "tried again meanwhile").to.be.at.least(2);
    expect(most, "requests open at once to an endpoint that stopped answering").to.equal(1);

    const log = await waitFor(async () => {
      const res = await app.api.request("GET", `/webhooks/${made.body.id}/deliveries`, { headers: ROOT });
      const retried = (res.body.deliveries as JsonBody[]).find((d) => d.attempts >= 2);
      return retried;
    });
    expect(log.status).to.equal("pending");
    expect(log.lastError).to.match(/no answer within 300 ms/);
    expect(log.nextAttemptAt).to.be.a("string");
  });
});
