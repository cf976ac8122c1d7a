/**
 * Issue 31: a crash at each step of a write (CRASH_AT makes the service SIGKILL itself there),
 * on an automining node that makes no block unless a transaction comes. Each heals by itself.
 */
import { rmSync } from "node:fs";
import { expect } from "chai";
import { Wallet } from "ethers";
import {
  ApiClient,
  ChainNode,
  ServiceProcess,
  collectionAt,
  deployWithScript,
  directProvider,
  fundedWallet,
  sleep,
  type JsonBody,
} from "../api/harness";
import { seededDataDir } from "../support/pglite-template";

describe("a crash at each step of a write heals by itself (automining node, PGlite)", function () {
  this.timeout(180_000);
  let node: ChainNode;
  let collection: string;
  let dataDir: string;
  const env = () => ({ DATA_DIR: dataDir, TX_TIMEOUT_MS: "5000", BLOCK_POLL_MS: "100" });

  before(async function () {
    node = await ChainNode.start();
    collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000" });
  });

  beforeEach(async function () {
    dataDir = await seededDataDir("crash-point-");
  });

  afterEach(function () {
    rmSync(dataDir, { recursive: true, force: true });
  });

  after(async function () {
    await node?.stop();
  });

  const supply = async () => {
    const provider = directProvider(node.rpcUrl);
    try {
      return (await collectionAt(collection, provider).totalSupply()) as bigint;
    } finally {
      provider.destroy();
    }
  };

  /** Starts the service with CRASH_AT=step, sends one keyed mint, and waits for the process to die. */
  async function crashAt(step: string, key: Wallet, idempotencyKey: string): Promise<void> {
    const service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { ...env(), CRASH_AT: step } });
    const body = { privateKey: key.privateKey, contractAddress: collection, mintAmount: 1 };
    const answer = await new ApiClient(service.url)
      .post("/nft/mint", body, { "Idempotency-Key": idempotencyKey })
      .catch(() => null);
    expect(answer, "the process died before it answered").to.equal(null);
    expect((await service.exited()).signal).to.equal("SIGKILL");
  }

  /** Replays the key with the same body until it answers 200; the body of that 200. */
  async function replayUntil200(api: ApiClient, key: Wallet, idempotencyKey: string, ms = 30_000): Promise<JsonBody> {
    const body = { privateKey: key.privateKey, contractAddress: collection, mintAmount: 1 };
    const deadline = Date.now() + ms;
    for (;;) {
      const res = await api.post("/nft/mint", body, { "Idempotency-Key": idempotencyKey });
      if (res.status === 200) return res.body;
      if (Date.now() > deadline) throw new Error(`still ${res.status} ${res.text}`);
      await sleep(300);
    }
  }

  async function operationOf(api: ApiClient, key: Wallet, idempotencyKey: string): Promise<JsonBody | null> {
    // A replay tells the operation id without sending anything new when the key is recorded.
    const res = await api.post(
      "/nft/mint",
      { privateKey: key.privateKey, contractAddress: collection, mintAmount: 1 },
      { "Idempotency-Key": idempotencyKey },
    );
    return res.status === 200 || res.status === 202 ? res.body : null;
  }

  /** A fresh key with ether on the node: its nonces are its own. */
  async function newKey(): Promise<Wallet> {
    const provider = directProvider(node.rpcUrl);
    try {
      return await fundedWallet(provider);
    } finally {
      provider.destroy();
    }
  }

  for (const step of ["nonce-taken", "row-stored", "broadcast"] as const) {
    it(`killed at "${step}": the write ends confirmed once, and the key's next write is not stuck behind it`, async function () {
      const key = await newKey();
      const before = await supply();
      await crashAt(step, key, `crash-${step}`);
      const service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: env() });
      try {
        const api = new ApiClient(service.url);
        if (step !== "nonce-taken") {
          // Recorded before the crash: it confirms with no request at all (broadcast again from the store).
          const deadline = Date.now() + 20_000;
          while ((await supply()) < before + 1n) {
            if (Date.now() > deadline) throw new Error("the recorded write was not mined without a request");
            await sleep(200);
          }
        }
        const first = await replayUntil200(api, key, `crash-${step}`);
        const next = await api.post("/nft/mint", {
          privateKey: key.privateKey,
          contractAddress: collection,
          mintAmount: 1,
        });
        expect(next.status, next.text).to.equal(200);
        expect(await supply()).to.equal(before + 2n);
        const op = (await api.get(`/nft/operations/${first.operationId}`)).body;
        expect(op.status).to.equal("confirmed");
      } finally {
        await service.stop();
      }
    });
  }

  it("killed after its row is stored, then killed again within 2 s of the follower taking it over: a new start still broadcasts it without any block or request (the cause of issue 31)", async function () {
    const key = await newKey();
    const before = await supply();
    await crashAt("row-stored", key, "twice");
    // Nothing reached the node. Restart with one head poll a minute: the follower's first pass takes
    // the operation over and writes its resend clock (sent); kill it before any second pass.
    const second = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { ...env(), BLOCK_POLL_MS: "60000" } });
    const api = new ApiClient(second.url);
    const deadline = Date.now() + 15_000;
    // While queued a replay answers 409 IDEMPOTENCY_KEY_IN_USE; once the clock is written, 202.
    while ((await operationOf(api, key, "twice"))?.status !== "pending") {
      if (Date.now() > deadline) throw new Error("the operation was not taken over");
      await sleep(50);
    }
    await second.kill();
    expect(await supply()).to.equal(before); // nothing broadcast yet: the second start never asked the node
    const third = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: env() });
    try {
      const waitUntil = Date.now() + 20_000;
      while ((await supply()) < before + 1n) {
        if (Date.now() > waitUntil) throw new Error("the write stayed unbroadcast on a chain that makes no block");
        await sleep(200);
      }
      const op = await operationOf(new ApiClient(third.url), key, "twice");
      expect(op?.status).to.be.oneOf(["confirmed", "pending"]);
    } finally {
      await third.stop();
    }
  });
});
