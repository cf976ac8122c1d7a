/**
 * Issue 51, deterministic: a re-sign between taking its new nonce and the store's record of it
 * (CRASH_AT=resign-nonce-taken, stalled there by CRASH_PAUSE_MS), while a new write of the same
 * call from the same key comes in. The node refuses the write's nonce as too high (the re-sign's,
 * below it, is not broadcast yet); before the fix the write started the key's counter again at the
 * chain's count, was handed the re-sign's nonce, and signed the same transaction (same call, nonce
 * and capped fees): both operations confirmed from one receipt, two 200s for one token.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { fundedWallet, sleep } from "../api/harness";
import {
  mempoolHolds,
  mintBody,
  operationsSharingTransaction,
  startEngineFixture,
  totalSupply,
  untilOperation,
  type EngineFixture,
} from "./fixture";

describe("a re-sign and a new write of the same call never share a nonce (issue 51)", function () {
  this.timeout(180_000);
  let f: EngineFixture;

  before(async function () {
    f = await startEngineFixture({
      CRASH_AT: "resign-nonce-taken",
      CRASH_PAUSE_MS: "6000",
      // Every quote capped to one value: the same call at the same nonce is then the same transaction.
      MAX_FEE_PER_GAS: "1500000000",
    });
  });

  after(async function () {
    await f?.stop();
  });

  it("the write waits for the re-sign's nonce and takes the next one: two transactions, two tokens", async function () {
    const key: Wallet = await fundedWallet(f.provider);
    const body = mintBody(f, key.privateKey);
    const before = await totalSupply(f);

    // A: sent, then its transaction is dropped and its nonce used by another transaction of the key.
    const a = f.api.post("/nft/mint", body, { "Idempotency-Key": "resign-a" });
    await mempoolHolds(f.chain, 1);
    const first = await a;
    expect(first.status, first.text).to.equal(202);
    const nonce = await f.chain.nonce(key.address, "pending");
    const [pending] = await f.chain.pendingTransactions();
    expect(await f.chain.dropTransaction(pending.hash)).to.equal(true);
    await key.connect(f.provider).sendTransaction({ to: key.address, value: 0n, nonce: nonce - 1 });
    await f.chain.setAutomine(true);
    await f.chain.mine(3); // past TX_RESEND_BLOCKS: the follower finds A's nonce used and re-signs it

    const deadline = Date.now() + 60_000;
    while (!f.service.output().includes("paused at crash point")) {
      if (Date.now() > deadline) throw new Error(`the re-sign never reached its crash point:\n${f.service.output()}`);
      await sleep(50);
    }
    // B, while A's re-sign holds its new nonce unrecorded: the same call from the same key.
    const second = await f.api.post("/nft/mint", body, { "Idempotency-Key": "resign-b" });
    expect(second.status, second.text).to.be.oneOf([200, 202]);

    const opA = await untilOperation(f, first.body.operationId as string, (op) => op.status === "confirmed", {
      timeoutMs: 60_000,
    });
    const opB = await untilOperation(f, second.body.operationId as string, (op) => op.status === "confirmed", {
      timeoutMs: 60_000,
    });
    expect(opA.transactionHash, "A and B answered with one transaction").to.not.equal(opB.transactionHash);
    expect(opA.nonce).to.not.equal(opB.nonce);
    expect(opA.transactionHashes).to.not.include(opB.transactionHash);
    expect(await totalSupply(f)).to.equal(before + 2n);
    expect(await operationsSharingTransaction(f.api)).to.equal(0);
  });
});
