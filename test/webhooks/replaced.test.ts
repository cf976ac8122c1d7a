/**
 * Operation events through the real engine (a `hardhat node` with automine off, a fault-injecting
 * JSON-RPC proxy, the service as users run it): a fee bump the node refuses is never reported; the
 * one it takes is, and each operation.replaced names a transaction the operation still lists. A
 * mint that reverts on chain is reported operation.failed, with the error GET shows.
 */
import { expect } from "chai";
import { Transaction, Wallet } from "ethers";
import { DEV_KEYS, TEST_API_KEY, usedSecrets } from "../api/harness";
import {
  mintBody,
  mintsRacingForLastToken,
  startEngineFixture,
  untilOperation,
  type EngineFixture,
} from "../engine/fixture";
import { Receiver } from "./receiver";

describe("operation events through the engine (automine off; a proxy refusing one fee bump)", function () {
  this.timeout(120_000);
  let f: EngineFixture;
  let receiver: Receiver;
  const dave = new Wallet(DEV_KEYS[6]);
  const erin = new Wallet(DEV_KEYS[7]);
  const frank = new Wallet(DEV_KEYS[8]);
  const owner = new Wallet(DEV_KEYS[0]);

  before(async function () {
    this.timeout(180_000);
    [f, receiver] = await Promise.all([startEngineFixture({ WEBHOOK_ALLOW_PRIVATE: "true" }), Receiver.start()]);
  });

  after(async function () {
    this.timeout(30_000);
    await f?.stop();
    await receiver?.close();
  });

  it("a refused fee bump writes no operation.replaced; the bump the node takes writes one, before operation.confirmed", async function () {
    const made = await f.api.request("POST", "/webhooks", {
      json: { url: receiver.url, events: ["operation.sent", "operation.replaced", "operation.confirmed"] },
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(made.status, made.text).to.equal(201);
    usedSecrets.add(made.body.secret as string);

    const res = await f.api.post("/nft/mint", mintBody(f, dave.privateKey));
    expect(res.status, res.text).to.equal(202);
    const id = res.body.operationId as string;
    const [pending] = await f.chain.pendingTransactions();
    // The first transaction at its nonce other than the original: the node refuses it.
    let refused: string | undefined;
    f.proxy.refuse("eth_sendRawTransaction", {
      // The proxy asks this more than once per call: the same answer each time.
      when: (params) => {
        const tx = Transaction.from(String(params[0]));
        if (tx.nonce !== pending.nonce || tx.hash === pending.hash) return false;
        refused ??= tx.hash!;
        return tx.hash === refused;
      },
      error: { code: -32000, message: "replacement transaction underpriced" },
    });
    const release = f.chain.keepBaseFeeAbove(pending.maxFeePerGas!);
    let op;
    try {
      op = await untilOperation(f, id, (o) => o.status === "confirmed", { mine: true, timeoutMs: 60_000 });
    } finally {
      release();
    }
    // (A bump signed again with the same fees after the refusal is the same transaction, same hash.)
    expect(refused, "a fee bump was refused").to.be.a("string");
    expect(op.transactionHashes.length).to.be.at.least(2);

    const mine = (
      await receiver.until((d) =>
        d.some((x) => x.json.type === "operation.confirmed" && x.json.data.operationId === id),
      )
    ).filter((d) => d.json.data.operationId === id);
    const replaced = mine.filter((d) => d.json.type === "operation.replaced");
    // One per replacement the operation lists, each naming it; none for the refused try.
    expect(replaced.map((d) => d.json.data.transactionHash)).to.deep.equal(op.transactionHashes.slice(1));
    expect(mine.map((d) => d.json.type)).to.deep.equal([
      "operation.sent",
      ...replaced.map(() => "operation.replaced"),
      "operation.confirmed",
    ]);
  });

  it("a mint that reverts on chain is reported operation.sent then operation.failed, with its error; the one that won, confirmed", async function () {
    const made = await f.api.request("POST", "/webhooks", {
      json: { url: `${receiver.url}/failed`, events: ["operation.sent", "operation.confirmed", "operation.failed"] },
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(made.status, made.text).to.equal(201);
    usedSecrets.add(made.body.secret as string);
    // Both simulate well; mined in one block, the second reverts.
    const { answers } = await mintsRacingForLastToken(f, owner, [erin.privateKey, frank.privateKey]);
    const won = answers.find((r) => r.status === 200);
    const lost = answers.find((r) => r.status === 422);
    expect(won && lost, answers.map((r) => r.text).join("\n")).to.not.equal(undefined);
    const [wonId, lostId] = [won!.body.operationId as string, lost!.body.error.operationId as string];

    const ofOperation = (id: string) =>
      receiver.deliveries.filter((d) => d.path === "/hook/failed" && d.json.data.operationId === id);
    await receiver.until(() => ofOperation(lostId).length === 2 && ofOperation(wonId).length === 2);
    expect(ofOperation(lostId).map((d) => d.json.type)).to.deep.equal(["operation.sent", "operation.failed"]);
    expect(ofOperation(wonId).map((d) => d.json.type)).to.deep.equal(["operation.sent", "operation.confirmed"]);
    const failed = ofOperation(lostId)[1].json.data;
    const view = await f.api.get(`/nft/operations/${lostId}`);
    expect(failed).to.deep.include({ operationId: lostId, status: "failed", from: view.body.from });
    expect(failed.error).to.deep.equal(view.body.error);
    expect((failed.error as { code: string }).code).to.equal("CONTRACT_REVERTED");
    expect(failed.transactionHash).to.equal(view.body.transactionHash);
  });
});
