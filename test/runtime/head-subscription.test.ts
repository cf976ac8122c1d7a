/**
 * New heads by subscription, polling as the truth (API.md "Block latency and JSON-RPC cost"): a
 * chain entry's `wsUrl` makes the block feed subscribe to `newHeads` there, through a counting
 * proxy in front of a `hardhat node` mining a block every second. A mint is answered from the
 * announced head without polls; a subscription that goes silent (the proxy passes on no
 * notification) is caught by a poll, started again, and mints are still answered; one whose socket
 * is cut reconnects.
 */
import { expect } from "chai";
import { ApiClient, ChainNode, DEV_KEYS, ServiceProcess, deployWithScript, sleep } from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { RpcProxy } from "../support/rpc-proxy";

const [OWNER_KEY, MINTER_KEY] = DEV_KEYS;

describe("heads by subscription, polling as the truth", function () {
  this.timeout(180_000);
  let node: ChainNode;
  let proxy: RpcProxy;
  let service: ServiceProcess;
  let api: ApiClient;
  let collection: string;

  before(async () => {
    node = await ChainNode.start();
    collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "1000" });
    const control = new ChainControl(node.rpcUrl);
    await control.setAutomine(false);
    await control.setIntervalMining(1000);
    proxy = await RpcProxy.start(node.rpcUrl);
    service = await ServiceProcess.start({
      chains: [{ id: 31337, rpcUrls: [proxy.url], wsUrl: proxy.wsUrl }],
      env: { TX_TIMEOUT_MS: "30000" },
    });
    api = new ApiClient(service.url);
  });

  after(async () => {
    await service?.stop();
    await proxy?.close();
    await node?.stop();
  });

  const mint = () => api.post("/nft/mint", { privateKey: MINTER_KEY, contractAddress: collection, mintAmount: 1 });
  const subscribes = () => proxy.calls.get("eth_subscribe") ?? 0;

  it("answers a mint from the announced head, with no head poll and one subscription", async () => {
    expect((await mint()).status).to.equal(200); // the key's nonce and the collection's check, once
    await sleep(1500);
    proxy.resetCounts();
    for (let i = 0; i < 3; i++) {
      const res = await mint();
      expect(res.status, res.text).to.equal(200);
      expect(res.body.status).to.equal("confirmed");
    }
    expect(proxy.calls.get("eth_blockNumber") ?? 0, [...proxy.calls].join(" ")).to.equal(0);
    expect(subscribes()).to.equal(0); // the subscription made at the start still stands
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).to.match(/block_seen_lag_seconds_count\{chain="31337"\} [1-9]/);
  });

  it("reads a collection's price once while no header may hold its CostChanged; a setCost mined since is read and paid", async () => {
    expect((await mint()).status).to.equal(200);
    proxy.resetCounts();
    const kept = await mint();
    expect(kept.status, kept.text).to.equal(200);
    expect(proxy.calls.get("eth_call") ?? 0, [...proxy.calls].join(" ")).to.equal(0);
    const set = await api.post("/nft/setCost", { privateKey: OWNER_KEY, contractAddress: collection, cost: "123" });
    expect(set.status, set.text).to.equal(200);
    const repriced = await mint();
    expect(repriced.status, repriced.text).to.equal(200);
    expect(repriced.body.value).to.equal("123");
  });

  it("a silent subscription: a poll finds the head it did not announce, subscribes again, and mints are answered", async () => {
    proxy.silentSubscriptions = true;
    proxy.resetCounts();
    const started = Date.now();
    const res = await mint();
    expect(res.status, res.text).to.equal(200);
    expect(res.body.status).to.equal("confirmed");
    // Three blocks of silence (at least 3 s) and a poll, for each silent subscription: within the write's 30 s.
    expect(Date.now() - started).to.be.below(30_000);
    expect(proxy.calls.get("eth_getBlockByNumber") ?? 0, "polls of the head block").to.be.greaterThan(0);
    expect(subscribes()).to.be.greaterThan(0);
    proxy.silentSubscriptions = false;
  });

  it("a cut socket: the subscription reconnects, and then needs no poll again", async () => {
    const connections = proxy.webSocketConnections;
    proxy.resetCounts();
    proxy.dropWebSockets();
    for (let i = 0; i < 100 && subscribes() === 0; i++) await sleep(100);
    expect(proxy.webSocketConnections).to.be.greaterThan(connections);
    // At least one: under load a silence check may subscribe once more; what counts is no poll after.
    expect(subscribes()).to.be.at.least(1);
    await sleep(3000); // a few blocks announced on the new subscription, the gap since the cut read
    proxy.resetCounts();
    const res = await mint();
    expect(res.status, res.text).to.equal(200);
    expect(proxy.calls.get("eth_blockNumber") ?? 0, [...proxy.calls].join(" ")).to.equal(0);
  });
});
