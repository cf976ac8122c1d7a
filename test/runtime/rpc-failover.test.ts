/**
 * Issue 43's failover test: one chain (a `hardhat node`, automining) reached through two URLs,
 * each an RpcProxy. Under a steady load of reads and keyed mints, the first URL answers 502, then
 * hangs, then resets connections, then forwards to a second node far behind (at block 0, not
 * mining); then it recovers and the second URL hangs. Through all of it no request is answered
 * 5xx, reads keep a p95 under 3 s, every keyed mint happens exactly once, and no operation shows
 * a reorg. /health shows each URL's state (masked), /metrics counts requests per URL and outcome.
 */
import { expect } from "chai";
import { Wallet } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  collectionAt,
  deployWithScript,
  directProvider,
  sleep,
  type ApiResponse,
} from "../api/harness";
import { ChainControl } from "../support/chain-control";
import { RpcProxy } from "../support/rpc-proxy";

const PATH_KEY = "abcdefghijklmnop0123456789";
const READER = DEV_KEYS[5];
const MINTERS = [DEV_KEYS[3], DEV_KEYS[4]];
const PHASE_MS = 3_000;

interface Sent {
  key: string;
  body: Record<string, unknown>;
}

describe("RPC failover: one chain, two URLs, the first failing every way, then the second hanging", function () {
  this.timeout(300_000);
  let node: ChainNode;
  let lagging: ChainNode;
  let first: RpcProxy;
  let second: RpcProxy;
  let service: ServiceProcess;
  let api: ApiClient;
  let collection: string;

  before(async function () {
    [node, lagging] = await Promise.all([ChainNode.start(), ChainNode.start()]);
    collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000", NFT_MAX_MINT_PER_TX: "5" });
    await new ChainControl(node.rpcUrl).mine(20); // the lagging node stays at block 0, more than 5 below
    await new ChainControl(lagging.rpcUrl).setAutomine(false);
    first = await RpcProxy.start(node.rpcUrl, { holdMs: 60_000 });
    second = await RpcProxy.start(node.rpcUrl, { holdMs: 60_000 });
    service = await ServiceProcess.start({
      rpcUrl: `${first.url}/v2/${PATH_KEY},${second.url}`,
      env: { RPC_TIMEOUT_MS: "2000", BLOCK_POLL_MS: "200", TX_TIMEOUT_MS: "10000" },
    });
    api = new ApiClient(service.url);
  });

  after(async function () {
    await service?.stop();
    await Promise.all([first?.close(), second?.close()]);
    await Promise.all([node?.stop(), lagging?.stop()]);
  });

  const urlStates = async () => ((await api.get("/health")).body.rpcUrls ?? []) as Array<Record<string, unknown>>;

  async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (${JSON.stringify(await urlStates())})`);
      await sleep(200);
    }
  }

  it("answers no 5xx, reads p95 < 3 s, every keyed mint once, no reorg; /health and /metrics show each URL masked", async function () {
    const health = await api.get("/health");
    expect(health.status).to.equal(200);
    const shown = (health.body.rpcUrls as Array<Record<string, unknown>>).map(({ url, status }) => ({ url, status }));
    expect(shown).to.deep.equal([
      { url: `${first.url}/***`, status: "ok" },
      { url: `${second.url}/***`, status: "ok" },
    ]);
    expect(health.body.rpcUrls[0].calls).to.be.a("number");
    expect(health.text).to.not.include(PATH_KEY);

    const provider = directProvider(node.rpcUrl);
    const nft = collectionAt(collection, provider);
    const supplyBefore = (await nft.totalSupply()) as bigint;
    const serverErrors: string[] = [];
    const readMs: number[] = [];
    const sent: Sent[] = [];
    let running = true;
    const note = (what: string, res: ApiResponse) => {
      if (res.status >= 500) serverErrors.push(`${what}: ${res.status} ${res.text.slice(0, 200)}`);
    };
    const readLoop = async (path: string, body: Record<string, unknown>) => {
      while (running) {
        const started = performance.now();
        const res = await api.post(path, body);
        readMs.push(performance.now() - started);
        note(path, res);
        await sleep(20);
      }
    };
    const mintLoop = async (key: string, w: number) => {
      for (let i = 0; running; i++) {
        const item = {
          key: `failover-${w}-${i}`,
          body: { privateKey: key, contractAddress: collection, mintAmount: 1 },
        };
        sent.push(item);
        note("/nft/mint", await api.post("/nft/mint", item.body, { "Idempotency-Key": item.key }));
        await sleep(50);
      }
    };
    const loops = [
      readLoop("/nft/total-supply", { privateKey: READER, contractAddress: collection }),
      readLoop("/nft/tokenURI", { privateKey: READER, contractAddress: collection, tokenId: "1" }),
      ...MINTERS.map((key, w) => mintLoop(key, w)),
    ];
    const phases: string[] = [];
    const masked = `${first.url}/***`.replace(/[.*/]/g, (c) => `\\${c}`);
    const failures = async (outcome: string) => {
      const counted = new RegExp(`rpc_requests_total\\{chain="31337",url="${masked}",outcome="${outcome}"\\} (\\d+)`);
      return Number((await api.get("/metrics")).text.match(counted)?.[1] ?? 0);
    };
    const OUTCOME = { "502": "http_error", hang: "timeout", reset: "connection_error" } as const;
    try {
      for (const mode of ["502", "hang", "reset"] as const) {
        const before = await failures(OUTCOME[mode]);
        first.mode = mode;
        phases.push(mode);
        await sleep(PHASE_MS);
        // A URL that is down is probed when its cooldown ends, and the cooldown doubles: a phase lasts
        // until the first URL has met its failure at least once (under load a probe fell just outside).
        await until(`the first URL meeting ${mode}`, 60_000, async () => (await failures(OUTCOME[mode])) > before);
        const [url1] = await urlStates();
        expect(url1.status, `first URL in mode ${mode}`).to.equal("down");
        expect(url1.lastError).to.be.a("string");
      }
      // Far behind: it forwards to a node at block 0, and is probed there once its cooldown ends.
      first.retarget(lagging.rpcUrl);
      first.mode = "forward";
      phases.push("behind");
      await until("the first URL behind", 90_000, async () => (await urlStates())[0]?.status === "behind");
      await sleep(PHASE_MS);
      // It recovers, and takes its place back once it has caught up.
      first.retarget(node.rpcUrl);
      phases.push("recovered");
      await until("the first URL back", 30_000, async () => (await urlStates())[0]?.status === "ok");
      second.mode = "hang";
      phases.push("second hangs");
      await until("the second URL down", 30_000, async () => (await urlStates())[1]?.status === "down");
      await sleep(PHASE_MS);
      second.mode = "forward";
    } finally {
      running = false;
      await Promise.all(loops);
    }

    expect(serverErrors, serverErrors.slice(0, 5).join("\n")).to.deep.equal([]);
    readMs.sort((a, b) => a - b);
    const p95 = readMs[Math.floor(readMs.length * 0.95)];
    expect(readMs.length).to.be.above(50);
    expect(p95, `reads p95 over ${readMs.length} reads`).to.be.below(3_000);

    // Every key: replayed until 200 (the same operation), confirmed once, no reorg.
    const operations = new Map<string, string>();
    const deadline = Date.now() + 60_000;
    let waiting = sent;
    while (waiting.length > 0) {
      if (Date.now() > deadline)
        throw new Error(`${waiting.length} keys not 200 within 60 s (first ${waiting[0].key})`);
      const answers = await Promise.all(
        waiting.map((item) => api.post("/nft/mint", item.body, { "Idempotency-Key": item.key })),
      );
      answers.forEach((res, i) => {
        if (res.status === 200) operations.set(waiting[i].key, res.body.operationId as string);
      });
      waiting = waiting.filter((_, i) => answers[i].status !== 200);
      if (waiting.length > 0) await sleep(500);
    }
    expect(new Set(operations.values()).size).to.equal(sent.length);
    const supplyAfter = (await nft.totalSupply()) as bigint;
    expect(supplyAfter - supplyBefore, `mints over ${sent.length} keys`).to.equal(BigInt(sent.length));
    for (const id of operations.values()) {
      const op = await api.get(`/nft/operations/${id}`);
      expect(op.body.status).to.equal("confirmed");
      expect(op.body.reorgs, `operation ${id}`).to.equal(0);
    }
    const minted = await Promise.all(MINTERS.map((key) => provider.getTransactionCount(new Wallet(key).address)));
    expect(minted.reduce((a, b) => a + b, 0)).to.be.at.least(sent.length);
    provider.destroy();

    expect(await failures("http_error"), "http_error counted for the first URL, masked").to.be.above(0);
    expect(await failures("timeout"), "timeout counted for the first URL, masked").to.be.above(0);
    const metrics = (await api.get("/metrics")).text;
    expect(metrics).to.not.include(PATH_KEY);
    expect(service.output()).to.not.include(PATH_KEY);
    expect(phases).to.have.length(6);
  });
});
