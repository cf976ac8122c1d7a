/**
 * Checkout exactly once (issue 65): a mintWithPermit whose service dies (CRASH_AT) after its row is
 * stored or after its broadcast is sent once by the restarted service with no request, and a replay
 * of its Idempotency-Key answers that one write; eight requests racing one key make one transaction;
 * a burst of buyers' keyed requests cut by a SIGKILL, every key replayed, buys each once. What a
 * shop checks: each buyer holds the tokens once, paid the price once (its permit nonce moved once),
 * and the sender's nonce moved once per purchase.
 */
import { rmSync } from "node:fs";
import { expect } from "chai";
import { Wallet, type Contract, type JsonRpcProvider } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  collectionAt,
  deployDirectly,
  directProvider,
  freshWallet,
  fundedWallet,
  sleep,
  type ApiResponse,
  type JsonBody,
} from "../harness";
import { expectOneWriteOfRace } from "../expectations";
import { seededDataDir } from "../../support/pglite-template";
import { deployToken, signCheckout } from "./checkout-helpers";

/** 2.5 TUSD (6 decimals), the price of one token. */
const COST = 2_500_000n;
const FUNDS = 100_000_000n;
/** Buyers in the burst that is killed. */
const BURST = 6;

describe("Checkout exactly once: mintWithPermit raced, killed mid-write and mid-burst (automining node, PGlite)", function () {
  this.timeout(180_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let owner: Wallet;
  let tusd: Contract;
  let collection: string;
  let dataDir: string;

  before(async function () {
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    owner = new Wallet(DEV_KEYS[0], provider);
    tusd = await deployToken(owner, "TestUSD");
    collection = await deployDirectly(owner, { cost: COST, maxSupply: 1_000n });
    const nft = collectionAt(collection, owner);
    await (await nft.getFunction("setPaymentToken")(await tusd.getAddress())).wait();
  });

  beforeEach(async function () {
    dataDir = await seededDataDir("checkout-crash-");
  });

  afterEach(function () {
    rmSync(dataDir, { recursive: true, force: true });
  });

  after(async function () {
    provider?.destroy();
    await node?.stop();
  });

  const start = (crashAt?: string) =>
    ServiceProcess.start({
      rpcUrl: node.rpcUrl,
      env: {
        DATA_DIR: dataDir,
        TX_TIMEOUT_MS: "5000",
        BLOCK_POLL_MS: "100",
        ...(crashAt ? { CRASH_AT: crashAt } : {}),
      },
    });

  const tokenBalance = async (address: string) => (await tusd.getFunction("balanceOf")(address)) as bigint;
  const permitNonce = async (address: string) => (await tusd.getFunction("nonces")(address)) as bigint;
  const nftBalance = async (address: string) =>
    (await collectionAt(collection, provider).getFunction("balanceOf")(address)) as bigint;

  /** A fresh buyer holding FUNDS of TUSD and no ETH, and the mintWithPermit body of its signed checkout of 2, sent by `sender`. */
  async function signedPurchase(api: ApiClient, sender: Wallet): Promise<{ buyer: Wallet; body: JsonBody }> {
    const buyer = freshWallet();
    await (await tusd.connect(owner).getFunction("mint")(buyer.address, FUNDS)).wait();
    const typed = await api.post("/nft/checkout", { contractAddress: collection, buyer: buyer.address, mintAmount: 2 });
    expect(typed.status, typed.text).to.equal(200);
    const body = {
      privateKey: sender.privateKey,
      contractAddress: collection,
      buyer: buyer.address,
      mintAmount: 2,
      deadline: (typed.body.message as JsonBody).deadline,
      signature: await signCheckout(buyer, typed.body),
    };
    return { buyer, body };
  }

  /** The buyer holds 2 tokens, paid 2 prices, and its permit nonce moved once; it holds no ETH. */
  async function expectBoughtOnce(buyer: Wallet): Promise<void> {
    expect(await nftBalance(buyer.address)).to.equal(2n);
    expect(await tokenBalance(buyer.address)).to.equal(FUNDS - 2n * COST);
    expect(await permitNonce(buyer.address)).to.equal(1n);
    expect(await provider.getBalance(buyer.address)).to.equal(0n);
  }

  for (const step of ["row-stored", "broadcast"] as const) {
    it(`killed at "${step}": the buyer gets 2 tokens and pays 2 prices once, with no request after the restart; a replay answers that write`, async function () {
      const sender = await fundedWallet(provider);
      const collectedBefore = await tokenBalance(collection);

      const crashing = await start(step);
      const api = new ApiClient(crashing.url);
      const { buyer, body } = await signedPurchase(api, sender);
      const key = `checkout-crash-${step}`;
      const answer = await api.post("/nft/mintWithPermit", body, { "Idempotency-Key": key }).catch(() => null);
      expect(answer, "the process died before it answered").to.equal(null);
      expect((await crashing.exited()).signal).to.equal("SIGKILL");

      const service = await start();
      try {
        // Stored before the crash: the restarted service sends (or follows) it with no request.
        const deadline = Date.now() + 30_000;
        while ((await nftBalance(buyer.address)) < 2n) {
          if (Date.now() > deadline) throw new Error("the stored mintWithPermit was not mined without a request");
          await sleep(200);
        }
        const again = new ApiClient(service.url);
        let replay = await again.post("/nft/mintWithPermit", body, { "Idempotency-Key": key });
        while (replay.status === 202 && Date.now() < deadline) {
          await sleep(300);
          replay = await again.post("/nft/mintWithPermit", body, { "Idempotency-Key": key });
        }
        expect(replay.status, replay.text).to.equal(200);
        expect(replay.body).to.include({ buyer: buyer.address, value: (COST * 2n).toString() });
        expect(replay.body.tokenIds).to.have.length(2);
        const op = await again.get(`/nft/operations/${replay.body.operationId}`);
        expect(op.body.status).to.equal("confirmed");

        // Once: settle a moment for a second broadcast that should not exist, then count.
        await sleep(1_500);
        await expectBoughtOnce(buyer);
        expect(await tokenBalance(collection)).to.equal(collectedBefore + 2n * COST);
        expect(await provider.getTransactionCount(sender.address)).to.equal(1);
      } finally {
        await service.stop();
      }
    });
  }

  it("eight requests racing one Idempotency-Key make one transaction: every 2xx names it, the buyer pays once", async function () {
    const service = await start();
    try {
      const api = new ApiClient(service.url);
      const sender = await fundedWallet(provider);
      const { buyer, body } = await signedPurchase(api, sender);
      const key = `checkout-race-${Date.now()}`;
      const send = () => api.post("/nft/mintWithPermit", body, { "Idempotency-Key": key });
      const answers = await Promise.all(Array.from({ length: 8 }, send));
      expectOneWriteOfRace(answers);
      let final = await send();
      for (const deadline = Date.now() + 30_000; final.status === 202 && Date.now() < deadline;) {
        await sleep(300);
        final = await send();
      }
      expect(final.status, final.text).to.equal(200);
      expect(final.headers.get("idempotent-replayed")).to.equal("true");
      await expectBoughtOnce(buyer);
      expect(await provider.getTransactionCount(sender.address)).to.equal(1);
    } finally {
      await service.stop();
    }
  });

  it(`${BURST} buyers' keyed mintWithPermit from one sender, killed mid-burst (SIGKILL), every key replayed until 200: each bought once, one transaction per key`, async function () {
    const sender = await fundedWallet(provider);
    let service = await start();
    const first = new ApiClient(service.url);
    const purchases: { buyer: Wallet; body: JsonBody }[] = [];
    for (let i = 0; i < BURST; i++) purchases.push(await signedPurchase(first, sender));
    const keys = purchases.map((_, i) => `checkout-burst-${Date.now()}-${i}`);
    const send = (api: ApiClient, i: number) =>
      api.post("/nft/mintWithPermit", purchases[i].body, { "Idempotency-Key": keys[i] });
    // Automine off: nothing of the burst answers before the kill, which comes once the mempool holds
    // half of it (the others still being signed, recorded or broadcast).
    const pending = async () => ((await provider.send("eth_pendingTransactions", [])) as unknown[]).length;
    await provider.send("evm_setAutomine", [false]);
    let cut: (ApiResponse | null)[];
    try {
      const burst = keys.map((_, i) => send(first, i).catch(() => null));
      const deadline = Date.now() + 60_000;
      while ((await pending()) < BURST / 2) {
        if (Date.now() > deadline) throw new Error(`the mempool never held ${BURST / 2} of the burst`);
        await sleep(20);
      }
      await service.kill();
      cut = await Promise.all(burst);
    } finally {
      await provider.send("evm_setAutomine", [true]);
    }
    expect(cut.filter((res) => res === null).length, "requests cut by the kill").to.be.greaterThan(0);
    service = await start();
    try {
      const api = new ApiClient(service.url);
      const answers = new Map<number, JsonBody>();
      const deadline = Date.now() + 90_000;
      while (answers.size < BURST) {
        const waiting = keys.map((_, i) => i).filter((i) => !answers.has(i));
        if (Date.now() > deadline) throw new Error(`${waiting.length} keys still not 200`);
        // A block for what the mempool holds, and for the follower's rebroadcast of what was signed but not sent.
        await provider.send("evm_mine", []);
        const replies = await Promise.all(waiting.map((i) => send(api, i)));
        replies.forEach((reply, n) => reply.status === 200 && answers.set(waiting[n], reply.body));
        if (answers.size < BURST) await sleep(500);
      }
      const hashes = [...answers.values()].map((answer) => answer.transactionHash as string);
      expect(new Set(hashes).size, "one transaction per key").to.equal(BURST);
      for (const { buyer } of purchases) await expectBoughtOnce(buyer);
      expect(await provider.getTransactionCount(sender.address)).to.equal(BURST);
    } finally {
      await service.stop();
    }
  });
});
