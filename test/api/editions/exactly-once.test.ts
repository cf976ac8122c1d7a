/**
 * Issue 57: an edition mint is an operation like any other (API.md, "Operations" and
 * "Idempotency-Key"). Keyed mints of one edition racing the same key make one transaction and
 * answer alike (createEdition too: one edition, one tokenId); a replay after the operation
 * confirmed answers its 200 byte for byte; one SIGKILL mid-burst of keyed edition mints from a
 * held wallet, every key replayed until 200, leaves the edition's supply grown by exactly the
 * number of keys (test/engine/identical-calls-burst.test.ts is the model, here one small round).
 * One node for the file; the service is killed and restarted on its data directory.
 */
import { rmSync } from "node:fs";
import { expect } from "chai";
import { Contract, type JsonRpcProvider } from "ethers";
import { editionsInterface } from "../../../server/chain/editions";
import { seededRandom } from "../../support/seeded-random";
import { seededDataDir } from "../../support/pglite-template";
import { operationsSharingTransaction } from "../../engine/fixture";
import { expectError, expectOneWriteOfRace } from "../expectations";
import {
  ApiClient,
  ChainNode,
  ServiceProcess,
  TEST_API_KEY,
  directProvider,
  sleep,
  type ApiResponse,
  type JsonBody,
} from "../harness";

const ROOT = { Authorization: `Bearer ${TEST_API_KEY}` };
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 100_000);
/** Keyed mints in the burst that is killed. */
const BURST = 12;

describe("exactly once on editions: racing keys, replays after confirmation, a SIGKILL mid-burst (issue 57)", function () {
  this.timeout(120_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let dataDir: string;
  let env: Record<string, string>;
  let service: ServiceProcess;
  let api: ApiClient;
  let editions: string;
  let onChain: Contract;
  let tokenId: string;
  let buyer: string;

  before(async function () {
    this.timeout(180_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    dataDir = await seededDataDir("editions-once-");
    env = { DATA_DIR: dataDir, TX_TIMEOUT_MS: "3000", BLOCK_POLL_MS: "200", WALLET_MASTER_KEY: "57".repeat(32) };
    service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
    api = new ApiClient(service.url);
    for (const label of ["shop", "buyer"]) {
      const made = await api.post("/wallets", { kind: "local", label }, ROOT);
      expect(made.status, made.text).to.equal(201);
      await provider.send("hardhat_setBalance", [made.body.address, `0x${(10n ** 20n).toString(16)}`]);
      if (label === "buyer") buyer = made.body.address;
    }
    const deployed = await api.post("/nft/deploy", { from: "shop", standard: "erc1155" }, ROOT);
    expect(deployed.status, deployed.text).to.equal(201);
    editions = deployed.body.contractAddress;
    onChain = new Contract(editions, editionsInterface(), provider);
    const edition = await api.post(
      "/nft/createEdition",
      { from: "shop", contractAddress: editions, cost: "1000", maxSupply: 0, maxMintAmountPerTx: 5 },
      ROOT,
    );
    expect(edition.status, edition.text).to.equal(200);
    tokenId = edition.body.tokenId;
  });

  after(async function () {
    this.timeout(30_000);
    await provider?.send("evm_setAutomine", [true]).catch(() => {});
    provider?.destroy();
    await service?.stop();
    await node?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const mint = (key: string, mintAmount = 1, edition = tokenId) =>
    api.post(
      "/nft/mint",
      { from: "buyer", contractAddress: editions, tokenId: edition, mintAmount },
      { ...ROOT, "Idempotency-Key": key },
    );

  /** Polls GET /nft/operations/{id} until its status is `status` (60 s bound). */
  async function untilStatus(operationId: string, status: string): Promise<JsonBody> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await api.request("GET", `/nft/operations/${operationId}`, { headers: ROOT });
      if (res.body.status === status) return res.body;
      if (Date.now() > deadline) throw new Error(`operation ${operationId} not ${status}: ${res.text}`);
      await sleep(200);
    }
  }

  it("eight mints of one edition racing one key make one transaction; every 2xx names it, every 200 is the same bytes", async function () {
    const key = `race-${Date.now()}`;
    const nonce = await provider.getTransactionCount(buyer);
    const balance = (await onChain.balanceOf(buyer, tokenId)) as bigint;
    const answers = await Promise.all(Array.from({ length: 8 }, () => mint(key, 3)));
    const accepted = expectOneWriteOfRace(answers);
    const confirmed = await untilStatus(accepted[0].body.operationId, "confirmed");
    const final = await mint(key, 3);
    expect(final.status, final.text).to.equal(200);
    expect(final.headers.get("idempotent-replayed")).to.equal("true");
    for (const res of answers.filter((r) => r.status === 200)) expect(res.text).to.equal(final.text);
    expect(final.body).to.include({ tokenId, amount: "3", transactionHash: confirmed.transactionHash });
    expect(await provider.getTransactionCount(buyer)).to.equal(nonce + 1);
    expect(await onChain.balanceOf(buyer, tokenId)).to.equal(balance + 3n);
  });

  it("a mint answered 202 (not mined in TX_TIMEOUT_MS), replayed in flight (202) and after it confirmed (its 200, byte for byte); another body under the key: 422", async function () {
    const key = `after-${Date.now()}`;
    const supply = (await onChain["totalSupply(uint256)"](tokenId)) as bigint;
    await provider.send("evm_setAutomine", [false]);
    let pending: ApiResponse;
    try {
      pending = await mint(key, 2);
      expect(pending.status, pending.text).to.equal(202);
      const inFlight = await mint(key, 2);
      expect(inFlight.status, inFlight.text).to.equal(202);
      expect(inFlight.headers.get("idempotent-replayed")).to.equal("true");
      expect(inFlight.body).to.include({
        operationId: pending.body.operationId,
        transactionHash: pending.body.transactionHash,
      });
    } finally {
      await provider.send("evm_setAutomine", [true]);
    }
    await provider.send("evm_mine", []);
    await untilStatus(pending.body.operationId, "confirmed");
    const replay = await mint(key, 2);
    expect(replay.status, replay.text).to.equal(200);
    expect(replay.headers.get("idempotent-replayed")).to.equal("true");
    expect(replay.body).to.include({
      status: "confirmed",
      tokenId,
      amount: "2",
      operationId: pending.body.operationId,
      transactionHash: pending.body.transactionHash,
    });
    expect((await mint(key, 2)).text, "a second replay").to.equal(replay.text);
    expectError(await mint(key, 1), 422, "IDEMPOTENCY_KEY_REUSED");
    expect(await onChain["totalSupply(uint256)"](tokenId)).to.equal(supply + 2n);
  });

  it("createEdition racing one key makes one edition: every 2xx and the replay after it confirmed answer the same tokenId", async function () {
    const key = `create-${Date.now()}`;
    const count = (await onChain.editionCount()) as bigint;
    const create = () =>
      api.post(
        "/nft/createEdition",
        { from: "shop", contractAddress: editions, cost: "5", maxSupply: 10, maxMintAmountPerTx: 2 },
        { ...ROOT, "Idempotency-Key": key },
      );
    const answers = await Promise.all(Array.from({ length: 4 }, create));
    for (const res of answers) {
      expect([200, 202, 409], res.text).to.include(res.status);
      if (res.status === 409) expectError(res, 409, "IDEMPOTENCY_KEY_IN_USE");
    }
    const accepted = answers.filter((r) => r.status < 300);
    expect(new Set(accepted.map((r) => r.body.operationId)).size, "one operation").to.equal(1);
    await untilStatus(accepted[0].body.operationId, "confirmed");
    const replay = await create();
    expect(replay.status, replay.text).to.equal(200);
    expect(replay.headers.get("idempotent-replayed")).to.equal("true");
    expect(replay.body.tokenId).to.equal((count + 1n).toString());
    for (const res of answers.filter((r) => r.status === 200)) expect(res.text).to.equal(replay.text);
    expect(await onChain.editionCount()).to.equal(count + 1n);
  });

  it(`${BURST} keyed edition mints killed mid-burst (SIGKILL), every key replayed until 200: the supply grows by ${BURST}, one transaction per key`, async function () {
    const random = seededRandom(SEED);
    const supply = (await onChain["totalSupply(uint256)"](tokenId)) as bigint;
    const keys = Array.from({ length: BURST }, (_, i) => `burst-${SEED}-${i}`);
    // Automine off: no mint of the burst can answer before the kill, which comes once the mempool
    // holds a seeded share of the burst (CRASH_SEED repeats it): some sent, the others still being
    // signed, recorded or broadcast.
    const sentBeforeKill = 1 + Math.floor(random() * (BURST - 1));
    const pending = async () => ((await provider.send("eth_pendingTransactions", [])) as unknown[]).length;
    await provider.send("evm_setAutomine", [false]);
    let cut: (ApiResponse | null)[];
    try {
      const burst = keys.map((key) => mint(key).catch(() => null));
      const deadline = Date.now() + 60_000;
      while ((await pending()) < sentBeforeKill) {
        if (Date.now() > deadline) throw new Error(`the mempool never held ${sentBeforeKill} of the burst`);
        await sleep(20);
      }
      await service.kill();
      cut = await Promise.all(burst);
    } finally {
      await provider.send("evm_setAutomine", [true]);
    }
    expect(
      cut.filter((res) => res === null).length,
      `requests cut by the kill (${cut.map((r) => r?.status ?? "-").join(" ")})`,
    ).to.be.greaterThan(0);
    service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env });
    api = new ApiClient(service.url);
    const answers = new Map<string, JsonBody>();
    const deadline = Date.now() + 90_000;
    while (answers.size < keys.length) {
      const waiting = keys.filter((key) => !answers.has(key));
      if (Date.now() > deadline)
        throw new Error(`${waiting.length} keys still not 200 (first: ${waiting[0]}, CRASH_SEED=${SEED})`);
      // A block for what the mempool holds, and for the follower's rebroadcast of what was signed but not sent.
      await provider.send("evm_mine", []);
      const replies = await Promise.all(waiting.map((key) => mint(key)));
      replies.forEach((reply, i) => reply.status === 200 && answers.set(waiting[i], reply.body));
      if (answers.size < keys.length) await sleep(500);
    }
    const hashes = [...answers.values()].map((answer) => answer.transactionHash as string);
    expect(new Set(hashes).size, `one transaction per key (CRASH_SEED=${SEED})`).to.equal(keys.length);
    expect(await onChain["totalSupply(uint256)"](tokenId), `CRASH_SEED=${SEED}`).to.equal(supply + BigInt(BURST));
    expect(await operationsSharingTransaction(api)).to.equal(0);
  });
});
