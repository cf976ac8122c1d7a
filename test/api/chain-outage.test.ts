/**
 * The JSON-RPC endpoint going away and coming back, on a node + service pair of its own so that
 * the other files' shared chain is unaffected.
 */
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import { expectError, expectNoGasSpent, expectNoSecretsIn } from "./expectations";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  TEST_API_KEY,
  ServiceProcess,
  deployWithScript,
  directProvider,
  sleep,
  type ApiResponse,
} from "./harness";

const RPC_TIMEOUT_MS = 2_000;
const TX_TIMEOUT_MS = 2_000;
/** How long an answer may take while the chain is down: one RPC timeout plus slack for a busy machine. */
const UNAVAILABLE_WITHIN_MS = RPC_TIMEOUT_MS + 3_000;

describe("the JSON-RPC endpoint going away", function () {
  let node: ChainNode;
  let service: ServiceProcess;
  let api: ApiClient;
  let provider: JsonRpcProvider;
  let collection: string;

  const minter = new Wallet(DEV_KEYS[5]);
  const newcomer = new Wallet(DEV_KEYS[6]);

  before(async function () {
    this.timeout(150_000);
    node = await ChainNode.start();
    const [deployed, started] = await Promise.allSettled([
      deployWithScript(node.rpcUrl),
      ServiceProcess.start({
        rpcUrl: node.rpcUrl,
        env: { RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS), TX_TIMEOUT_MS: String(TX_TIMEOUT_MS) },
      }),
    ]);
    if (started.status === "fulfilled") service = started.value;
    if (deployed.status === "rejected") throw deployed.reason;
    if (started.status === "rejected") throw started.reason;
    collection = deployed.value;
    api = new ApiClient(service.url);
    provider = directProvider(node.rpcUrl);
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
  });

  const mint = (key: string, mintAmount: unknown = 1) =>
    api.post("/nft/mint", { privateKey: key, contractAddress: collection, mintAmount });

  /** The follower confirms a 202 write in the background: GET /nft/operations/{id} says so. */
  async function untilConfirmed(operationId: string): Promise<void> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const op = await api.get(`/nft/operations/${operationId}`);
      if (op.body.status === "confirmed") return;
      if (Date.now() > deadline) throw new Error(`operation still ${op.text}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function timed(call: () => Promise<ApiResponse>): Promise<{ res: ApiResponse; ms: number }> {
    const started = Date.now();
    const res = await call();
    return { res, ms: Date.now() - started };
  }

  it("while the node answers, a mint answers 200", async function () {
    const res = await mint(minter.privateKey);
    expect(res.status, res.text).to.equal(200);
  });

  it("a mint not mined within TX_TIMEOUT_MS answers 202 {status:'pending', transactionHash, from, contractAddress}, and the transaction confirms later", async function () {
    this.timeout(60_000);
    await provider.send("evm_setAutomine", [false]);
    try {
      const { res, ms } = await timed(() => mint(minter.privateKey, 2));
      expect(res.status, res.text).to.equal(202);
      expect(ms).to.be.at.least(TX_TIMEOUT_MS - 100);
      expect(Object.keys(res.body)).to.have.members([
        "status",
        "operationId",
        "transactionHash",
        "from",
        "contractAddress",
        "chainId",
      ]);
      expect(res.body.status).to.equal("pending");
      expect(res.body.transactionHash).to.match(/^0x[0-9a-f]{64}$/);
      expect(res.body.from).to.equal(minter.address);
      expect(res.body.contractAddress).to.equal(collection);
      expect(res.headers.get("etag"), "no ETag on a 202").to.equal(null);
      expect(await provider.getTransactionReceipt(res.body.transactionHash)).to.equal(null);

      await provider.send("evm_mine", []);
      const receipt = await provider.getTransactionReceipt(res.body.transactionHash);
      expect(receipt?.status).to.equal(1);
      await untilConfirmed(res.body.operationId);
    } finally {
      await provider.send("evm_setAutomine", [true]);
    }
  });

  it("a deployment not mined within TX_TIMEOUT_MS answers 202 with the address the collection will have", async function () {
    this.timeout(60_000);
    await provider.send("evm_setAutomine", [false]);
    try {
      const res = await api.post("/nft/deploy", { privateKey: minter.privateKey });
      expect(res.status, res.text).to.equal(202);
      expect(res.body.status).to.equal("pending");
      expect(res.body.contractAddress).to.match(/^0x[0-9a-fA-F]{40}$/);
      await provider.send("evm_mine", []);
      const receipt = await provider.getTransactionReceipt(res.body.transactionHash);
      expect(receipt?.contractAddress).to.equal(res.body.contractAddress);
      await untilConfirmed(res.body.operationId);
    } finally {
      await provider.send("evm_setAutomine", [true]);
    }
  });

  describe("when the node is killed", function () {
    before(async function () {
      await node.kill();
    });

    it(`GET /health answers 503 CHAIN_UNAVAILABLE within ${UNAVAILABLE_WITHIN_MS} ms`, async function () {
      const { res, ms } = await timed(() => api.get("/health"));
      expectError(res, 503, "CHAIN_UNAVAILABLE");
      expect(ms).to.be.below(UNAVAILABLE_WITHIN_MS);
    });

    it(`a mint answers 503 CHAIN_UNAVAILABLE within ${UNAVAILABLE_WITHIN_MS} ms`, async function () {
      const { res, ms } = await timed(() => mint(minter.privateKey));
      expectError(res, 503, "CHAIN_UNAVAILABLE");
      expect(ms).to.be.below(UNAVAILABLE_WITHIN_MS);
    });

    it(`a read (total-supply) answers 503 CHAIN_UNAVAILABLE within ${UNAVAILABLE_WITHIN_MS} ms`, async function () {
      const { res, ms } = await timed(() =>
        api.post("/nft/total-supply", { privateKey: minter.privateKey, contractAddress: collection }),
      );
      expectError(res, 503, "CHAIN_UNAVAILABLE");
      expect(ms).to.be.below(UNAVAILABLE_WITHIN_MS);
    });

    it(`a write at an address the service has not seen yet answers 503 CHAIN_UNAVAILABLE, not 404`, async function () {
      const res = await api.post("/nft/setPaused", {
        privateKey: minter.privateKey,
        contractAddress: newcomer.address,
        state: true,
      });
      expectError(res, 503, "CHAIN_UNAVAILABLE");
    });

    it("withdraw without the API key answers 401 INVALID_API_KEY: the key is checked before any chain call", async function () {
      const res = await api.post("/nft/withdraw", { privateKey: DEV_KEYS[0], contractAddress: collection });
      expectError(res, 401, "INVALID_API_KEY");
    });

    it("withdraw with the API key answers 503 CHAIN_UNAVAILABLE", async function () {
      const res = await api.post(
        "/nft/withdraw",
        { privateKey: DEV_KEYS[0], contractAddress: collection },
        { API_KEY: TEST_API_KEY },
      );
      expectError(res, 503, "CHAIN_UNAVAILABLE");
    });

    it("validation still answers 400 without the chain", async function () {
      expectError(await mint(minter.privateKey, "x"), 400, "VALIDATION_ERROR");
    });
  });

  describe("when a node is restarted on the same port (a fresh, empty chain)", function () {
    const stranger = new Wallet(DEV_KEYS[7]);

    before(async function () {
      this.timeout(60_000);
      node = await ChainNode.start(node.port);
    });

    it("GET /health answers 200 again without restarting the service", async function () {
      this.timeout(30_000);
      const deadline = Date.now() + 15_000;
      let res = await api.get("/health");
      while (res.status !== 200 && Date.now() < deadline) {
        await sleep(250);
        res = await api.get("/health");
      }
      expect(res.status, res.text).to.equal(200);
      expect(res.body.chainId).to.equal("31337");
    });

    // First after the restart: the service still remembers a collection at this address.
    it("mintForFree at the old collection address, now without code, answers 404 CONTRACT_NOT_FOUND and spends no gas", async function () {
      const res = await expectNoGasSpent(provider, stranger.address, () =>
        api.post("/nft/mintForFree", { privateKey: stranger.privateKey, contractAddress: collection, mintAmount: 1 }),
      );
      expectError(res, 404, "CONTRACT_NOT_FOUND");
    });

    it("total-supply at the old collection address, now without code, answers 404 CONTRACT_NOT_FOUND", async function () {
      const res = await api.post("/nft/total-supply", { privateKey: stranger.privateKey, contractAddress: collection });
      expectError(res, 404, "CONTRACT_NOT_FOUND");
    });

    describe("and the collection is redeployed", function () {
      before(async function () {
        this.timeout(60_000);
        const redeployed = await deployWithScript(node.rpcUrl);
        // The same deployer at nonce 0 of a fresh chain: the collection is back at its address.
        expect(redeployed).to.equal(collection);
      });

      it("the redeployed collection answers total-supply 0 through the service", async function () {
        const res = await api.post("/nft/total-supply", {
          privateKey: newcomer.privateKey,
          contractAddress: collection,
        });
        expect(res.status, res.text).to.equal(200);
        expect(res.body).to.deep.equal({
          totalSupply: "0",
          maxSupply: "10000",
          wallet: { address: newcomer.address, tokenIds: [] },
        });
      });

      it("a key the service has not used before mints on the new chain", async function () {
        const res = await mint(newcomer.privateKey);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.tokenIds).to.deep.equal(["1"]);
      });

      it("a key that minted before the outage mints on the new chain too (its nonce is read again)", async function () {
        const res = await mint(minter.privateKey);
        expect(res.status, res.text).to.equal(200);
        expect(res.body.tokenIds).to.have.length(1);
      });
    });
  });

  describe("secrets", function () {
    it("no response body and no log line contains a private key or the API key used in the tests", function () {
      expectNoSecretsIn(api.responseTexts, service.output());
    });
  });
});
