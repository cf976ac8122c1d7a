/**
 * Issue 38: an operation is followed until its block is final, not only until it is answered. A
 * reorg that removes the receipt of a mint already answered `confirmed` sends it back to `sent`;
 * it is mined again, once, without any request.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { DEV_KEYS, TEST_API_KEY, usedSecrets } from "../api/harness";
import { Receiver } from "../webhooks/receiver";
import {
  minedWhenSent,
  mintBody,
  operation,
  startEngineFixture,
  totalSupply,
  untilOperation,
  type EngineFixture,
} from "./fixture";

const FINALITY_BLOCKS = 6;

describe("operations followed until final: a reorg after the answer (automine off, FINALITY_BLOCKS=6)", function () {
  this.timeout(90_000);
  let f: EngineFixture;
  let receiver: Receiver;

  before(async function () {
    this.timeout(180_000);
    [f, receiver] = await Promise.all([
      startEngineFixture({ FINALITY_BLOCKS: String(FINALITY_BLOCKS), WEBHOOK_ALLOW_PRIVATE: "true" }),
      Receiver.start(),
    ]);
  });

  after(async function () {
    this.timeout(30_000);
    await f?.stop();
    await receiver?.close();
  });

  /** A mint mined in the next block, answered 200. */
  async function mintAnswered(key: string) {
    const res = await minedWhenSent(f, f.api.post("/nft/mint", mintBody(f, key)));
    expect(res.status, res.text).to.equal(200);
    return res.body;
  }

  it("a mint answered 200, then reverted out with empty blocks mined in its place: back to sent, mined again with no request, reorgs 1, supply right", async function () {
    const key = DEV_KEYS[7];
    const hook = await f.api.request("POST", "/webhooks", {
      json: { url: receiver.url, events: ["operation.confirmed", "operation.reorged"] },
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(hook.status, hook.text).to.equal(201);
    usedSecrets.add(hook.body.secret as string);
    const supply = await totalSupply(f);
    const fork = await f.chain.snapshot();
    const answered = await mintAnswered(key);
    expect((await operation(f.api, answered.operationId)).final).to.equal(false);

    expect(await f.chain.revert(fork)).to.equal(true);
    await f.chain.mine(2); // a longer fork without the mint
    const undone = await untilOperation(f, answered.operationId, (o) => o.reorgs === 1);
    expect(undone.status === "sent" || undone.status === "confirmed").to.equal(true);

    const op = await untilOperation(f, answered.operationId, (o) => o.status === "confirmed" && o.reorgs === 1, {
      mine: true,
    });
    expect(op.transactionHashes, "the same signed transaction, at the same nonce").to.deep.equal([
      answered.transactionHash,
    ]);
    expect(op.nonce).to.equal((await operation(f.api, answered.operationId)).nonce);
    expect(op.blockNumber).to.not.equal(answered.blockNumber);
    expect(await totalSupply(f)).to.equal(supply + 1n);
    // operation.reorged reaches the endpoint between the two operation.confirmed, in that order.
    const events = await receiver.until(
      (d) => d.filter((x) => x.json.data.operationId === answered.operationId).length >= 3,
    );
    const types = events.filter((x) => x.json.data.operationId === answered.operationId).map((x) => x.json.type);
    expect(types).to.deep.equal(["operation.confirmed", "operation.reorged", "operation.confirmed"]);
    // The replay shows where it stands now, not the first answer.
    const replayed = await f.api.get(`/nft/operations/${answered.operationId}`);
    expect(replayed.body.result.tokenIds).to.deep.equal(op.result.tokenIds);
  });

  it("a reorg whose new fork used the mint's nonce for another transaction of the key: the mint is re-signed at a new nonce and mined once", async function () {
    const key = new Wallet(DEV_KEYS[8], f.provider);
    const supply = await totalSupply(f);
    const fork = await f.chain.snapshot();
    const answered = await mintAnswered(key.privateKey);
    const nonce = (await operation(f.api, answered.operationId)).nonce as number;

    expect(await f.chain.revert(fork)).to.equal(true);
    // The new fork: the key's nonce goes to a plain transfer instead.
    const other = await key.sendTransaction({ to: key.address, value: 0n, nonce, gasLimit: 21_000n });
    await f.chain.mine();
    await f.chain.mine();
    expect((await f.provider.getTransactionReceipt(other.hash))?.status).to.equal(1);

    const op = await untilOperation(
      f,
      answered.operationId,
      (o) => o.status !== "sent" && o.reorgs === 1 && o.nonce !== nonce,
      {
        mine: true,
        timeoutMs: 40_000,
      },
    );
    expect(["confirmed", "failed"]).to.include(op.status);
    if (op.status === "confirmed") {
      expect(op.transactionHashes.length).to.equal(2);
      expect(await totalSupply(f)).to.equal(supply + 1n);
    } else {
      expect(op.error.code).to.equal("TRANSACTION_ABANDONED");
      expect(await totalSupply(f)).to.equal(supply);
    }
  });

  it(`final turns true ${FINALITY_BLOCKS} blocks deep; a later revert below that depth changes nothing`, async function () {
    const key = DEV_KEYS[9];
    const fork = await f.chain.snapshot();
    const answered = await mintAnswered(key);
    await f.chain.mine(FINALITY_BLOCKS - 1);
    expect((await untilOperation(f, answered.operationId, (o) => o.final === false)).final).to.equal(false);
    await f.chain.mine(1);
    const final = await untilOperation(f, answered.operationId, (o) => o.final === true);
    expect(final.status).to.equal("confirmed");

    expect(await f.chain.revert(fork)).to.equal(true);
    await f.chain.mine(3);
    await new Promise((resolve) => setTimeout(resolve, 2_500)); // passes at two heads and a still one
    const after = await operation(f.api, answered.operationId);
    expect(after).to.include({ status: "confirmed", final: true, reorgs: 0, blockNumber: answered.blockNumber });
  });
});
