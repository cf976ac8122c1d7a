/**
 * operation.replaced through the real engine (a `hardhat node` with automine off, a fault-injecting
 * JSON-RPC proxy, the service as users run it): a fee bump the node refuses is never reported; the
 * one it takes is, and each operation.replaced names a transaction the operation still lists.
 */
import { expect } from "chai";
import { Transaction, Wallet } from "ethers";
import { DEV_KEYS, TEST_API_KEY, usedSecrets } from "../api/harness";
import { mintBody, startEngineFixture, untilOperation, type EngineFixture } from "../engine/fixture";
import { Receiver } from "./receiver";

describe("operation.replaced through the engine (automine off, a proxy refusing one fee bump)", function () {
  this.timeout(120_000);
  let f: EngineFixture;
  let receiver: Receiver;
  const dave = new Wallet(DEV_KEYS[6]);

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
});
