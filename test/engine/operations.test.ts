import { expect } from "chai";
import { Wallet } from "ethers";
import { expectError, UUID } from "../api/expectations";
import { DEV_KEYS, collectionAt, sleep } from "../api/harness";
import {
  mempoolHolds,
  minedWhenSent,
  mintBody,
  mintsRacingForLastToken,
  operation,
  startEngineFixture,
  totalSupply,
  untilOperation,
  type EngineFixture,
} from "./fixture";

describe("operations and Idempotency-Key (automine off: the test mines every block)", function () {
  this.timeout(60_000);
  let f: EngineFixture;
  const alice = new Wallet(DEV_KEYS[1]);
  const bob = new Wallet(DEV_KEYS[2]);
  const owner = new Wallet(DEV_KEYS[0]);

  before(async function () {
    this.timeout(180_000);
    f = await startEngineFixture();
  });

  after(async function () {
    this.timeout(30_000);
    await f?.stop();
  });

  const mint = (key: string, headers?: Record<string, string>, mintAmount: unknown = 1) =>
    f.api.post("/nft/mint", mintBody(f, key, mintAmount), headers);

  it("a mint answers 200 once its block is mined; GET /nft/operations/{id} shows it confirmed with its nonce, hash and result", async function () {
    const nonce = await f.chain.nonce(alice.address);
    const res = await minedWhenSent(f, mint(alice.privateKey));
    expect(res.status, res.text).to.equal(200);
    expect(res.body.operationId).to.match(UUID);
    const op = await operation(f.api, res.body.operationId);
    expect(op).to.include({
      operationId: res.body.operationId,
      operation: "mint",
      status: "confirmed",
      from: alice.address,
      contractAddress: f.collection,
      nonce,
      transactionHash: res.body.transactionHash,
      blockNumber: res.body.blockNumber,
    });
    expect(op.transactionHashes).to.deep.equal([res.body.transactionHash]);
    expect(op.result).to.deep.equal({ tokenIds: res.body.tokenIds, value: res.body.value });
    expect(op).to.not.have.property("error");
    expect(Date.parse(op.createdAt)).to.be.at.most(Date.parse(op.updatedAt));
  });

  it("an unknown operation id answers 404 OPERATION_NOT_FOUND", async function () {
    expectError(await f.api.get("/nft/operations/2b1a7c4e-0000-4000-8000-000000000000"), 404, "OPERATION_NOT_FOUND");
    expectError(await f.api.get("/nft/operations/not-a-uuid"), 404, "OPERATION_NOT_FOUND");
  });

  describe("Idempotency-Key", function () {
    it("a repeat with the same key and body sends nothing and answers the first 200 byte for byte, with Idempotent-Replayed: true", async function () {
      const key = { "Idempotency-Key": `replay-${Date.now()}` };
      const [supply, nonce] = [await totalSupply(f), await f.chain.nonce(alice.address)];
      const first = await minedWhenSent(f, mint(alice.privateKey, key));
      expect(first.status, first.text).to.equal(200);
      expect(first.headers.get("idempotent-replayed")).to.equal(null);

      const again = await mint(alice.privateKey, key);
      expect(again.status).to.equal(200);
      expect(again.text).to.equal(first.text);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      expect((await f.chain.pendingTransactions()).length, "nothing sent").to.equal(0);
      expect(await totalSupply(f)).to.equal(supply + 1n);
      expect(await f.chain.nonce(alice.address)).to.equal(nonce + 1);
    });

    it("the same key with another body answers 422 IDEMPOTENCY_KEY_REUSED and sends nothing", async function () {
      const key = { "Idempotency-Key": `reused-${Date.now()}` };
      expect((await minedWhenSent(f, mint(alice.privateKey, key))).status).to.equal(200);
      const nonce = await f.chain.nonce(alice.address);
      expectError(await mint(alice.privateKey, key, 2), 422, "IDEMPOTENCY_KEY_REUSED");
      expect(await f.chain.nonce(alice.address)).to.equal(nonce);
      expect((await f.chain.pendingTransactions()).length).to.equal(0);
    });

    it('the body is compared as parsed: mintAmount 1 and "1" are the same request', async function () {
      const key = { "Idempotency-Key": `parsed-${Date.now()}` };
      const first = await minedWhenSent(f, mint(alice.privateKey, key, 1));
      const again = await mint(alice.privateKey, key, "1");
      expect(again.text).to.equal(first.text);
    });

    it("another caller with the same key runs its own write", async function () {
      const key = { "Idempotency-Key": `shared-${Date.now()}` };
      const first = await minedWhenSent(f, mint(alice.privateKey, key));
      const other = await minedWhenSent(f, mint(bob.privateKey, key));
      expect(other.status, other.text).to.equal(200);
      expect(other.headers.get("idempotent-replayed")).to.equal(null);
      expect(other.body.operationId).to.not.equal(first.body.operationId);
      expect(other.body.from).to.equal(bob.address);
    });

    it("a request refused before sending stores nothing: its repeat with the same key runs anew", async function () {
      const key = { "Idempotency-Key": `refused-${Date.now()}` };
      const collection = collectionAt(f.collection, owner.connect(f.provider));
      await collection.setPaused(true);
      await f.chain.mine();
      expectError(await mint(alice.privateKey, key), 409, "CONTRACT_PAUSED");
      await collection.setPaused(false);
      await f.chain.mine();
      const again = await minedWhenSent(f, mint(alice.privateKey, key));
      expect(again.status, again.text).to.equal(200);
      expect(again.headers.get("idempotent-replayed")).to.equal(null);
    });

    it("an Idempotency-Key of 256 characters or with a space answers 400 VALIDATION_ERROR", async function () {
      expectError(await mint(alice.privateKey, { "Idempotency-Key": "k".repeat(256) }), 400, "VALIDATION_ERROR");
      expectError(await mint(alice.privateKey, { "Idempotency-Key": "two words" }), 400, "VALIDATION_ERROR");
    });

    it("a repeat while the first is still being broadcast answers 409 IDEMPOTENCY_KEY_IN_USE; once sent, 202 with the same operation", async function () {
      const key = { "Idempotency-Key": `in-use-${Date.now()}` };
      // The node gets the transaction but its answer never comes back until RPC_TIMEOUT_MS.
      const lost = f.proxy.loseAnswer("eth_sendRawTransaction", { mode: "timeout" });
      const first = mint(alice.privateKey, key);
      await lost.done;
      expectError(await mint(alice.privateKey, key), 409, "IDEMPOTENCY_KEY_IN_USE");
      const pending = await first;
      expect(pending.status, pending.text).to.equal(202);
      const again = await mint(alice.privateKey, key);
      expect(again.status).to.equal(202);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      expect(again.body.operationId).to.equal(pending.body.operationId);
      expect(again.body.transactionHash).to.equal(pending.body.transactionHash);
      await f.chain.mine();
      await untilOperation(f, pending.body.operationId, (op) => op.status === "confirmed");
      const replay = await mint(alice.privateKey, key);
      expect(replay.status).to.equal(200);
      expect(replay.body.status).to.equal("confirmed");
      expect(replay.body.transactionHash).to.equal(pending.body.transactionHash);
    });

    it("repeats sent together with the first take no nonce: 4 keys each sent twice at once make 4 transactions, without a gap or a 0-value fill", async function () {
      const nonce = await f.chain.nonce(alice.address);
      const keys = [0, 1, 2, 3].map((i) => ({ "Idempotency-Key": `together-${Date.now()}-${i}` }));
      // A slow node: every repeat is past its route's replay check before any first request is recorded.
      f.proxy.latencyMs = 100;
      const answers = keys.flatMap((key) => [mint(alice.privateKey, key), mint(alice.privateKey, key)]);
      try {
        await mempoolHolds(f.chain, 4);
      } finally {
        f.proxy.latencyMs = 0;
      }
      await f.chain.mine();
      const settled = await Promise.all(answers);
      for (const res of settled) expect([200, 202, 409], res.text).to.include(res.status);
      const operations = new Set(settled.filter((r) => r.status < 300).map((r) => r.body.operationId as string));
      expect(operations.size, "one operation per key").to.equal(4);
      for (const id of operations) expect((await operation(f.api, id)).status, id).to.equal("confirmed");
      // A nonce taken by a repeat and given back would be filled now, a block later.
      await sleep(500);
      await f.chain.mine(2);
      await sleep(500);
      expect(await f.chain.nonce(alice.address), "4 transactions, nothing else").to.equal(nonce + 4);
      expect(await f.chain.pendingTransactions()).to.deep.equal([]);
    });
  });

  describe("following after the answer", function () {
    it("a mint not mined within TX_TIMEOUT_MS answers 202; the follower confirms it when its block comes; a replay then answers the 200", async function () {
      const key = { "Idempotency-Key": `background-${Date.now()}` };
      const supply = await totalSupply(f);
      const res = await mint(alice.privateKey, key);
      expect(res.status, res.text).to.equal(202);
      expect(res.body).to.include({ status: "pending", from: alice.address, contractAddress: f.collection });
      expect((await operation(f.api, res.body.operationId)).status).to.equal("sent");
      await f.chain.mine();
      const op = await untilOperation(f, res.body.operationId, (o) => o.status === "confirmed");
      expect(op.transactionHash).to.equal(res.body.transactionHash);
      expect(op.result.tokenIds).to.have.length(1);
      expect(await totalSupply(f)).to.equal(supply + 1n);
      const replay = await mint(alice.privateKey, key);
      expect(replay.status).to.equal(200);
      expect(replay.body).to.include({ status: "confirmed", operationId: res.body.operationId });
      expect(replay.body.tokenIds).to.deep.equal(op.result.tokenIds);
    });

    it("two mints racing for the last token both simulate well; the one mined second reverts on chain and ends failed CONTRACT_REVERTED", async function () {
      const { lastOne, answers } = await mintsRacingForLastToken(f, owner, [alice.privateKey, bob.privateKey]);
      const won = answers.filter((r) => r.status === 200);
      const lost = answers.filter((r) => r.status !== 200);
      expect(won, answers.map((r) => r.text).join("\n")).to.have.length(1);
      const error = expectError(lost[0], 422, "CONTRACT_REVERTED");
      expect(error.operationId).to.match(UUID);
      const op = await operation(f.api, error.operationId);
      expect(op.status).to.equal("failed");
      expect(op.error.code).to.equal("CONTRACT_REVERTED");
      const receipt = await f.provider.getTransactionReceipt(op.transactionHash);
      expect(receipt?.status, "reverted on chain").to.equal(0);
      expect(await totalSupply(f, lastOne)).to.equal(1n);
    });
  });
});
