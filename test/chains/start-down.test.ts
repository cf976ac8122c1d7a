/**
 * Issue 64 (faults), part 5: a start while RPC URLs do not answer (API.md, "Chains"). RPC_URL's
 * chain (its id unknown) is asked again with backoff through transient errors, up to
 * CHAIN_START_TIMEOUT_MS; a chain CHAINS names never stops the start: it is down (writes 503, the
 * store's reads answer) until one of its URLs answers, and then it joins. Before the fix a single
 * 503 to eth_chainId stopped the start ("Failed to start: server response 503").
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import { expectError } from "../api/expectations";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  TEST_API_KEY,
  deployWithScript,
  directProvider,
  sleep,
  type ApiResponse,
} from "../api/harness";
import { RpcProxy } from "../support/rpc-proxy";
import { startTwoChains } from "../support/two-chains";

const ROOT = { authorization: `Bearer ${TEST_API_KEY}` };
const PATH_KEY = "abcdefghijklmnop0123456789";

async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(200);
  }
  return Date.now() - started;
}

describe("a start while RPC_URL answers 503", function () {
  this.timeout(180_000);
  let node: ChainNode;
  let proxy: RpcProxy;
  let service: ServiceProcess | undefined;

  before(async function () {
    node = await ChainNode.start();
    proxy = await RpcProxy.start(node.rpcUrl);
  });

  after(async function () {
    await service?.stop();
    await proxy?.close();
    await node?.stop();
  });

  it("answering 503 for 10 s, then healthy: the service serves within 15 s of the URL's recovery, and mints", async function () {
    const collection = await deployWithScript(node.rpcUrl);
    proxy.mode = "503";
    const starting = ServiceProcess.start({ rpcUrl: proxy.url, env: { CHAIN_START_TIMEOUT_MS: "60000" } });
    starting.catch(() => {}); // awaited below
    // 10 s of 503 from the service's first question (its process takes a while to get there).
    await until("the service asking eth_chainId", 60_000, async () => (proxy.calls.get("eth_chainId") ?? 0) > 0);
    await sleep(10_000);
    const askedWhileDown = proxy.calls.get("eth_chainId") ?? 0;
    proxy.mode = "forward";
    const recovered = Date.now();
    service = await starting;
    const serving = Date.now() - recovered;
    expect(serving, "ms from the URL's recovery to the service answering /health 200").to.be.below(15_000);
    expect(askedWhileDown, "eth_chainId asked again while the URL answered 503").to.be.at.least(3);
    expect(service.output()).to.not.include("Failed to start");
    const minter = new Wallet(DEV_KEYS[2]);
    const res = await new ApiClient(service.url).post("/nft/mint", {
      privateKey: minter.privateKey,
      contractAddress: collection,
      mintAmount: 1,
    });
    expect(res.status, res.text).to.equal(200);
  });

  it("that never answers stops the start after CHAIN_START_TIMEOUT_MS, with one line naming the URL masked", async function () {
    proxy.mode = "503";
    const started = Date.now();
    const refused = await ServiceProcess.start({
      rpcUrl: `${proxy.url}/v2/${PATH_KEY}`,
      env: { CHAIN_START_TIMEOUT_MS: "3000" },
    }).then(
      async (started) => {
        await started.stop();
        return "";
      },
      (err: Error) => err.message,
    );
    const took = Date.now() - started;
    proxy.mode = "forward";
    const failures = refused.split("\n").filter((line) => line.startsWith("Failed to start"));
    expect(failures, refused).to.have.length(1);
    expect(failures[0]).to.include(`No RPC URL of the chain (${proxy.url}/***) answered eth_chainId within 3000 ms`);
    expect(failures[0]).to.include("server response 503");
    expect(refused).to.not.include(PATH_KEY);
    expect(took, "the start waited about CHAIN_START_TIMEOUT_MS").to.be.at.least(3_000);
  });
});

describe("two chains, one down at start", function () {
  this.timeout(300_000);
  const ALPHA = 31_411;
  const BETA = 31_412;
  let alpha: ChainNode;
  let beta: ChainNode;
  let betaUrl: RpcProxy;
  let service: ServiceProcess;
  let api: ApiClient;
  let owner: Wallet;
  let collection: string;
  let betaNonce: () => Promise<number>;

  before(async function () {
    const started = await startTwoChains(ALPHA, BETA);
    ({ alpha, beta, owner, collection } = started);
    started.providers.alpha.destroy();
    started.providers.beta.destroy();
    const provider = directProvider(beta.rpcUrl, BETA);
    betaNonce = () => provider.getTransactionCount(owner.address);
    betaUrl = await RpcProxy.start(beta.rpcUrl);
    betaUrl.mode = "503";
    service = await ServiceProcess.start({
      chains: [
        { id: ALPHA, name: "alpha", rpcUrls: [alpha.rpcUrl] },
        { id: BETA, name: "beta", rpcUrls: [betaUrl.url] },
      ],
      env: { TX_TIMEOUT_MS: "10000" },
    });
    api = new ApiClient(service.url);
  });

  after(async function () {
    await service?.stop();
    await betaUrl?.close();
    await Promise.all([alpha?.stop(), beta?.stop()]);
  });

  const mint = (chain: string): Promise<ApiResponse> =>
    api.post("/nft/mint", { chain, privateKey: owner.privateKey, contractAddress: collection, mintAmount: 1 });
  const operations = async (chain: string) => {
    const res = await api.request("GET", `/nft/operations?chain=${chain}`, { headers: ROOT });
    expect(res.status, res.text).to.equal(200);
    return res.body.operations as unknown[];
  };
  const status = async (name: string) =>
    ((await api.get("/chains")).body.chains as Array<{ name: string; status: string }>).find((c) => c.name === name)
      ?.status;

  it("starts: GET /chains shows beta down, /health answers 200 degraded", async function () {
    expect(await status("alpha")).to.equal("ok");
    expect(await status("beta")).to.equal("down");
    const health = await api.get("/health");
    expect(health.status, health.text).to.equal(200);
    expect(health.body.status).to.equal("degraded");
    expect(service.output()).to.include("no RPC URL of the chain answers");
  });

  it("alpha serves writes", async function () {
    const res = await mint("alpha");
    expect(res.status, res.text).to.equal(200);
    expect(res.body.chainId).to.equal(String(ALPHA));
  });

  it("a write on beta answers 503 CHAIN_UNAVAILABLE, stores and sends nothing; the store's reads of beta answer", async function () {
    const nonce = await betaNonce();
    expectError(await mint("beta"), 503, "CHAIN_UNAVAILABLE");
    expect(await betaNonce()).to.equal(nonce);
    expect(await operations("beta")).to.deep.equal([]);
  });

  it("beta joins once its URL answers: its writes answer 200", async function () {
    betaUrl.mode = "forward";
    await until("beta ok in GET /chains", 20_000, async () => (await status("beta")) === "ok");
    const nonce = await betaNonce();
    const res = await mint("beta");
    expect(res.status, res.text).to.equal(200);
    expect(res.body.chainId).to.equal(String(BETA));
    expect(await betaNonce()).to.equal(nonce + 1);
    expect(await operations("beta")).to.have.length(1);
    expect(service.output()).to.include("the chain answers: joined");
  });
});
