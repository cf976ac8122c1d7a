/**
 * Checkout exactly once: a mintWithPermit whose service dies (CRASH_AT) after its row is stored or
 * after its broadcast is sent once by the restarted service with no request, and a replay of its
 * Idempotency-Key answers that one write. What a shop checks: the buyer holds the tokens once, paid
 * the price once (its permit nonce moved once), and the sender's nonce moved once.
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
  type JsonBody,
} from "../harness";
import { seededDataDir } from "../../support/pglite-template";
import { deployToken, signCheckout } from "./checkout-helpers";

/** 2.5 TUSD (6 decimals), the price of one token. */
const COST = 2_500_000n;
const FUNDS = 100_000_000n;

describe("Checkout exactly once: mintWithPermit killed mid-write is sent once by the restarted service (automining node, PGlite)", function () {
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

  for (const step of ["row-stored", "broadcast"] as const) {
    it(`killed at "${step}": the buyer gets 2 tokens and pays 2 prices once, with no request after the restart; a replay answers that write`, async function () {
      const sender = await fundedWallet(provider);
      const buyer = freshWallet();
      await (await tusd.connect(owner).getFunction("mint")(buyer.address, FUNDS)).wait();
      const collectedBefore = await tokenBalance(collection);

      const crashing = await start(step);
      const api = new ApiClient(crashing.url);
      const typed = await api.post("/nft/checkout", {
        contractAddress: collection,
        buyer: buyer.address,
        mintAmount: 2,
      });
      expect(typed.status, typed.text).to.equal(200);
      const message = typed.body.message as JsonBody;
      const body = {
        privateKey: sender.privateKey,
        contractAddress: collection,
        buyer: buyer.address,
        mintAmount: 2,
        deadline: message.deadline,
        signature: await signCheckout(buyer, typed.body),
      };
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
        expect(await nftBalance(buyer.address)).to.equal(2n);
        expect(await tokenBalance(buyer.address)).to.equal(FUNDS - 2n * COST);
        expect(await tokenBalance(collection)).to.equal(collectedBefore + 2n * COST);
        expect(await permitNonce(buyer.address)).to.equal(1n);
        expect(await provider.getTransactionCount(sender.address)).to.equal(1);
        expect(await provider.getBalance(buyer.address)).to.equal(0n);
      } finally {
        await service.stop();
      }
    });
  }
});
