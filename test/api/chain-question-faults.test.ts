/**
 * Issue 64 (faults), part 5: a chain question that fails on every RPC URL answers 503
 * CHAIN_UNAVAILABLE, never 500, whichever question it is. One node behind two RpcProxy URLs; for
 * each JSON-RPC method a write or a read asks, both URLs answer HTTP 503 to that method alone
 * (every other method is forwarded), and the request that needs it answers 503 with nothing
 * stored and nothing sent. Before the fix the fee quote and a new key's nonce read answered 500.
 */
import { expect } from "chai";
import { Wallet, type JsonRpcProvider } from "ethers";
import { expectError } from "./expectations";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  TEST_API_KEY,
  ServiceProcess,
  collectionAt,
  deployWithScript,
  directProvider,
  sleep,
  type ApiResponse,
} from "./harness";
import { RpcProxy } from "../support/rpc-proxy";

const OWNER = new Wallet(DEV_KEYS[0]);
const MINTER = new Wallet(DEV_KEYS[3]);
/** A key this service has never signed for: its first write reads its nonce from the chain. */
const NEWCOMER = new Wallet(DEV_KEYS[4]);
const AUTH = { Authorization: `Bearer ${TEST_API_KEY}` };

describe("a chain question that fails on every RPC URL answers 503 CHAIN_UNAVAILABLE, one method at a time", function () {
  this.timeout(120_000);
  let node: ChainNode;
  let first: RpcProxy;
  let second: RpcProxy;
  let service: ServiceProcess;
  let api: ApiClient;
  let provider: JsonRpcProvider;
  let collection: string;
  /** A collection the service is never told of before its own test: its first read asks eth_getCode. */
  let unseen: string;

  before(async function () {
    node = await ChainNode.start();
    collection = await deployWithScript(node.rpcUrl, { NFT_COST: "0" });
    unseen = await deployWithScript(node.rpcUrl, { NFT_COST: "0" });
    [first, second] = await Promise.all([RpcProxy.start(node.rpcUrl), RpcProxy.start(node.rpcUrl)]);
    service = await ServiceProcess.start({
      rpcUrl: `${first.url},${second.url}`,
      env: { RPC_TIMEOUT_MS: "3000", TX_TIMEOUT_MS: "10000" },
    });
    api = new ApiClient(service.url);
    provider = directProvider(node.rpcUrl);
  });

  afterEach(function () {
    first?.clearRules();
    second?.clearRules();
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await Promise.all([first?.close(), second?.close()]);
    await node?.stop();
  });

  const mint = (key: string) => api.post("/nft/mint", { privateKey: key, contractAddress: collection, mintAmount: 1 });
  const operations = async () => {
    const res = await api.request("GET", "/nft/operations?limit=100", { headers: AUTH });
    expect(res.status, res.text).to.equal(200);
    return (res.body.operations as unknown[]).length;
  };

  /**
   * Both URLs answer HTTP 503 to `method` (and only to it) while `request` runs: it answers 503
   * CHAIN_UNAVAILABLE, both URLs were asked `method`, and the store and the chain are as before.
   */
  async function failingEverywhere(
    method: string,
    request: () => Promise<ApiResponse>,
    fail: (proxy: RpcProxy) => void = (proxy) => proxy.failWith(method, 503, { times: Infinity }),
  ): Promise<void> {
    const supply = (await collectionAt(collection, provider).totalSupply()) as bigint;
    const nonces = await Promise.all([MINTER, NEWCOMER].map((w) => provider.getTransactionCount(w.address)));
    const stored = await operations();
    const asked = [first, second].map((p) => p.calls.get(method) ?? 0);
    for (const proxy of [first, second]) fail(proxy);
    const res = await request();
    expectError(res, 503, "CHAIN_UNAVAILABLE");
    expect(
      [first, second].map((p, i) => (p.calls.get(method) ?? 0) > asked[i]),
      `both URLs asked ${method}`,
    ).to.deep.equal([true, true]);
    first.clearRules();
    second.clearRules();
    expect(await operations(), "operations stored").to.equal(stored);
    expect(await collectionAt(collection, provider).totalSupply()).to.equal(supply);
    expect(
      await Promise.all([MINTER, NEWCOMER].map((w) => provider.getTransactionCount(w.address))),
      "nonces on chain",
    ).to.deep.equal(nonces);
    expect(service.output(), "no request logged as an unhandled error").to.not.include("unhandled error");
  }

  it("eth_getBlockByNumber (the fee quote of a write) answers 503, not 500; the same write then answers 200", async function () {
    // The service's first write: no receipt has told the fee oracle a base fee yet, so it asks the node.
    await failingEverywhere("eth_getBlockByNumber", () => mint(MINTER.privateKey));
    const res = await mint(MINTER.privateKey);
    expect(res.status, res.text).to.equal(200);
  });

  it("eth_getTransactionCount (a new key's nonce) answers 503, not 500; the same write then answers 200", async function () {
    await failingEverywhere("eth_getTransactionCount", () => mint(NEWCOMER.privateKey));
    const res = await mint(NEWCOMER.privateKey);
    expect(res.status, res.text).to.equal(200);
  });

  it("eth_estimateGas (the simulation of a write) answers 503", async function () {
    await failingEverywhere("eth_estimateGas", () => mint(MINTER.privateKey));
  });

  it("eth_call (a read) answers 503", async function () {
    await failingEverywhere("eth_call", () =>
      api.post("/nft/total-supply", { privateKey: MINTER.privateKey, contractAddress: collection }),
    );
  });

  it("eth_getCode (the first read of a collection) answers 503, not 404; the same read then answers 200", async function () {
    const read = () => api.post("/nft/total-supply", { privateKey: MINTER.privateKey, contractAddress: unseen });
    await failingEverywhere("eth_getCode", read);
    const res = await read();
    expect(res.status, res.text).to.equal(200);
  });

  it("eth_getBalance (the collection's balance a withdraw reads) answers 503", async function () {
    await failingEverywhere("eth_getBalance", () =>
      api.post(
        "/nft/withdraw",
        { privateKey: OWNER.privateKey, contractAddress: collection },
        { API_KEY: TEST_API_KEY },
      ),
    );
  });

  it("eth_blockNumber (the head GET /health asks) answers 503", async function () {
    await failingEverywhere("eth_blockNumber", () => api.get("/health"));
  });

  describe("a node's bare JSON-RPC internal error (-32603, no data) on every URL is the chain not answering: 503, not 422 nor 500", function () {
    const internalError = (method: string) => (proxy: RpcProxy) =>
      void proxy.refuse(method, { error: { code: -32603, message: "Internal error" }, times: Infinity });

    it("eth_estimateGas (a write's simulation): 503, not 422 CONTRACT_REVERTED", async function () {
      await failingEverywhere("eth_estimateGas", () => mint(MINTER.privateKey), internalError("eth_estimateGas"));
    });

    it("eth_call (a read): 503, not 422", async function () {
      await failingEverywhere(
        "eth_call",
        () => api.post("/nft/total-supply", { privateKey: MINTER.privateKey, contractAddress: collection }),
        internalError("eth_call"),
      );
    });

    it("eth_getBalance (a withdraw's balance read): 503, not 500", async function () {
      await failingEverywhere(
        "eth_getBalance",
        () =>
          api.post(
            "/nft/withdraw",
            { privateKey: OWNER.privateKey, contractAddress: collection },
            { API_KEY: TEST_API_KEY },
          ),
        internalError("eth_getBalance"),
      );
    });
  });

  it("eth_sendRawTransaction is no question: its answer lost on every URL, a write answers 202 pending, never 5xx, and confirms once a URL takes it", async function () {
    const sender = new Wallet(DEV_KEYS[6]);
    const asked = [first, second].map((p) => p.calls.get("eth_sendRawTransaction") ?? 0);
    for (const proxy of [first, second]) proxy.failWith("eth_sendRawTransaction", 503, { times: Infinity });
    const res = await mint(sender.privateKey);
    expect(res.status, res.text).to.equal(202);
    expect(res.body.status).to.equal("pending");
    expect([first, second].map((p, i) => (p.calls.get("eth_sendRawTransaction") ?? 0) > asked[i])).to.deep.equal([
      true,
      true,
    ]);
    expect(await provider.getTransactionCount(sender.address), "nothing reached the node").to.equal(0);
    first.clearRules();
    second.clearRules();
    // The follower sends it again, the same transaction, and the operation confirms.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const op = await api.get(`/nft/operations/${res.body.operationId}`);
      if (op.body.status === "confirmed") break;
      if (Date.now() > deadline) throw new Error(`not confirmed: ${op.text}`);
      await sleep(500);
    }
    expect(await provider.getTransactionCount(sender.address)).to.equal(1);
    expect(service.output()).to.not.include("unhandled error");
  });
});
