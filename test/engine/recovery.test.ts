import { expect } from "chai";
import { Transaction, Wallet } from "ethers";
import { DEV_KEYS, sleep } from "../api/harness";
import {
  minedWhenSent,
  mintBody,
  operation,
  startEngineFixture,
  totalSupply,
  untilOperation,
  type EngineFixture,
} from "./fixture";

describe("recovery: dropped, underpriced, lost, refused and interrupted writes (automine off)", function () {
  this.timeout(90_000);
  let f: EngineFixture;
  const carol = new Wallet(DEV_KEYS[5]);

  before(async function () {
    this.timeout(180_000);
    f = await startEngineFixture();
  });

  after(async function () {
    this.timeout(30_000);
    await f?.stop();
  });

  const mint = () => f.api.post("/nft/mint", mintBody(f, carol.privateKey));

  /** Supply and the key's nonce now, to compare with after. */
  async function snapshot() {
    return { supply: await totalSupply(f), nonce: await f.chain.nonce(carol.address) };
  }

  it("a transaction dropped from the mempool is broadcast again at the next block and confirmed, minted once", async function () {
    const before = await snapshot();
    const res = await mint();
    expect(res.status, res.text).to.equal(202);
    const hash = res.body.transactionHash as string;
    expect(await f.chain.dropTransaction(hash)).to.equal(true);
    await f.chain.mine(); // the follower sees a block without the transaction and a node that forgot it
    const deadline = Date.now() + 10_000;
    while (!(await f.chain.pendingTransactions()).some((tx) => tx.hash === hash)) {
      if (Date.now() > deadline) throw new Error("the dropped transaction was not broadcast again");
      await sleep(50);
    }
    const op = await untilOperation(f, res.body.operationId, (o) => o.status === "confirmed", { mine: true });
    expect(op.transactionHashes).to.deep.equal([hash]);
    expect(await totalSupply(f)).to.equal(before.supply + 1n);
    expect(await f.chain.nonce(carol.address)).to.equal(before.nonce + 1);
  });

  it("a transaction priced under a fee spike is replaced after TX_RESEND_BLOCKS blocks with higher fees and confirmed, minted once, both hashes listed", async function () {
    const before = await snapshot();
    const res = await mint();
    expect(res.status, res.text).to.equal(202);
    const [pending] = await f.chain.pendingTransactions();
    const release = f.chain.keepBaseFeeAbove(pending.maxFeePerGas!);
    try {
      const op = await untilOperation(f, res.body.operationId, (o) => o.status === "confirmed", {
        mine: true,
        timeoutMs: 30_000,
      });
      expect(op.transactionHashes.length).to.be.at.least(2);
      expect(op.transactionHashes[0]).to.equal(res.body.transactionHash);
      expect(op.transactionHash).to.equal(op.transactionHashes.at(-1));
      const replacement = await f.provider.getTransaction(op.transactionHash);
      expect(replacement!.maxFeePerGas! * 8n).to.be.at.least(pending.maxFeePerGas! * 9n);
      expect(replacement!.nonce).to.equal(before.nonce);
    } finally {
      release();
    }
    expect(await totalSupply(f)).to.equal(before.supply + 1n);
    expect(await f.chain.nonce(carol.address)).to.equal(before.nonce + 1);
  });

  for (const mode of ["drop", "502", "timeout"] as const) {
    it(`a broadcast whose answer is lost (${mode}) answers 202 with the signed hash, not 503; it confirms once and the key is not stuck`, async function () {
      const before = await snapshot();
      f.proxy.loseAnswer("eth_sendRawTransaction", { mode });
      const res = await mint();
      expect(res.status, res.text).to.equal(202);
      expect(res.body.transactionHash).to.match(/^0x[0-9a-f]{64}$/);
      await f.chain.mine();
      const op = await untilOperation(f, res.body.operationId, (o) => o.status === "confirmed", { mine: true });
      expect(op.transactionHash).to.equal(res.body.transactionHash);
      expect(await totalSupply(f)).to.equal(before.supply + 1n);
      const next = await minedWhenSent(f, mint());
      expect(next.status, next.text).to.equal(200);
      expect(await f.chain.nonce(carol.address)).to.equal(before.nonce + 2);
    });
  }

  it("a broadcast the node refuses leaves no gap: later writes of the key, already sent at higher nonces, still confirm", async function () {
    const before = await snapshot();
    // Refuse the transaction at the key's next nonce; the two after it are already on their way.
    f.proxy.refuse("eth_sendRawTransaction", {
      when: (params) => Transaction.from(String(params[0])).nonce === before.nonce,
      error: { code: -32000, message: "insufficient funds for gas * price + value" },
    });
    const answers = await Promise.all([mint(), mint(), mint()]);
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses, answers.map((r) => r.text).join("\n")).to.deep.equal([202, 202, 402]);
    for (const res of answers.filter((r) => r.status === 202)) {
      await untilOperation(f, res.body.operationId, (o) => o.status === "confirmed", { mine: true, timeoutMs: 30_000 });
    }
    expect(await totalSupply(f)).to.equal(before.supply + 2n);
    // The refused nonce was taken again by one of the other two (if it signed after the refusal)
    // or filled with a 0-value transfer: either way nothing is left waiting behind a gap.
    expect(await f.chain.nonce(carol.address)).to.be.oneOf([before.nonce + 2, before.nonce + 3]);
    const next = await minedWhenSent(f, mint());
    expect(next.status, next.text).to.equal(200);
    expect(await f.chain.pendingTransactions()).to.deep.equal([]);
    expect(await f.chain.nonce(carol.address, "pending")).to.equal(await f.chain.nonce(carol.address));
  });

  it("SIGKILL with a transaction pending, then a restart on the same data: the operation still confirms and the key keeps working", async function () {
    this.timeout(180_000);
    const before = await snapshot();
    const res = await mint();
    expect(res.status, res.text).to.equal(202);
    await f.service.kill();
    await f.chain.mine();
    await f.restart();
    const op = await untilOperation(f, res.body.operationId, (o) => o.status === "confirmed", { mine: true });
    expect(op.transactionHash).to.equal(res.body.transactionHash);
    const next = await minedWhenSent(f, mint());
    expect(next.status, next.text).to.equal(200);
    expect(await totalSupply(f)).to.equal(before.supply + 2n);
    expect(await f.chain.nonce(carol.address)).to.equal(before.nonce + 2);
    expect((await operation(f.api, next.body.operationId)).nonce).to.equal(before.nonce + 1);
  });
});

describe("recovery: a reorg is proven by the chain, never assumed from a failed lookup (CONFIRMATIONS=2)", function () {
  this.timeout(60_000);
  let f: EngineFixture;
  const dave = new Wallet(DEV_KEYS[6]);

  before(async function () {
    this.timeout(180_000);
    f = await startEngineFixture({ CONFIRMATIONS: "2" });
  });

  after(async function () {
    this.timeout(30_000);
    await f?.stop();
  });

  it("a mint mined one block deep, then reorged out, goes back to sent, is mined again and confirms once", async function () {
    const supply = await totalSupply(f);
    const beforeBlock = await f.chain.snapshot();
    const res = await f.api.post("/nft/mint", mintBody(f, dave.privateKey));
    expect(res.status, res.text).to.equal(202);
    await f.chain.mine();
    const mined = await untilOperation(f, res.body.operationId, (o) => o.blockNumber !== undefined);
    expect(mined.status, "one block deep is not confirmed yet").to.equal("sent");

    expect(await f.chain.revert(beforeBlock)).to.equal(true); // the block is gone; the transaction is back in the mempool
    const reorged = await untilOperation(f, res.body.operationId, (o) => o.blockNumber === undefined);
    expect(reorged.status).to.equal("sent");

    const op = await untilOperation(f, res.body.operationId, (o) => o.status === "confirmed", { mine: true });
    expect(op.transactionHashes).to.deep.equal([res.body.transactionHash]);
    expect(await totalSupply(f)).to.equal(supply + 1n);
  });

  const failedLookups = {
    "answered null": (hash: string) =>
      f.proxy.answerWith("eth_getTransactionReceipt", { result: null }, { when: (params) => params[0] === hash }),
    "answered with an error": (hash: string) =>
      f.proxy.refuse("eth_getTransactionReceipt", {
        when: (params) => params[0] === hash,
        error: { code: -32603, message: "Internal error" },
      }),
  };
  for (const [how, failLookup] of Object.entries(failedLookups)) {
    it(`a receipt lookup ${how} for a mined transaction during one pass is no reorg: no "reorg" line, and it confirms at the next block as it would have`, async function () {
      const reorgLines = () =>
        f.service
          .output()
          .split("\n")
          .filter((line) => /reorg/i.test(line)).length;
      const linesBefore = reorgLines();
      const res = await f.api.post("/nft/mint", mintBody(f, dave.privateKey));
      expect(res.status, res.text).to.equal(202);
      await f.chain.mine();
      const mined = await untilOperation(f, res.body.operationId, (o) => o.blockNumber !== undefined);
      expect(mined.status, "one block deep is not confirmed yet").to.equal("sent");

      // The pass of the next block finds no receipt (the node's answer replaced by the proxy).
      const lookup = failLookup(res.body.transactionHash as string);
      await f.chain.mine();
      const op = await untilOperation(f, res.body.operationId, (o) => o.status === "confirmed", { timeoutMs: 10_000 });
      expect(lookup.hits, "the receipt lookup was answered so").to.equal(1);
      expect(op.blockNumber).to.equal(mined.blockNumber);
      expect(await f.chain.blockNumber(), "confirmed without another block").to.equal(mined.blockNumber + 1);
      expect(reorgLines()).to.equal(linesBefore);
    });
  }
});
