/**
 * What the engine costs in JSON-RPC calls, and how soon it answers, on a chain with block time: a
 * separate `hardhat node` mining a block every 1 s (automine off), behind a counting RpcProxy that
 * forwards HTTP and WebSocket JSON-RPC (+25 ms each way, as a hosted RPC). Every call of a batch
 * counts, as a provider bills it. Two services in turn, each following the collection (POST
 * /collections, so the index's reads count too):
 *  - "subscription": the chain's entry (CHAINS) has the proxy's http:// URL and its ws:// one as
 *    `wsUrl` (heads by eth_subscribe);
 *  - "polling": the same entry without `wsUrl` (heads by polls timed to the chain's pace).
 * For each: calls a minute while idle; calls per mint over BENCH_RPC_MINTS single mints, each sent
 * at a spread phase of a block (k/N of the block interval after a block reached the node), with the
 * time from its block reaching the node (the bench's own newHeads subscription, straight to the
 * node) to its 200; calls per mint of a burst of BENCH_RPC_BURST concurrent mints; calls per
 * setPaused over BENCH_RPC_OPS toggles, after a warm-up pause and unpause (as the mints come after two
 * warm-up mints). The baseline, in the same run and through the same proxy, is a raw ethers client
 * doing the same single mints: contract.mint() then tx.wait() (JsonRpcProvider, pollingInterval
 * 100 ms). Then the same with a subscription on anvil (`--block-time 1`), another node's answers.
 * Run: npm run bench:rpc-cost   (BENCH_RPC_MINTS, BENCH_RPC_BURST, BENCH_RPC_OPS, BENCH_RPC_IDLE_S;
 * BENCH_RPC_MODES, default subscription,polling,anvil: polling alone measures a build from before
 * subscriptions)
 */
import { Contract, JsonRpcProvider, Network, Wallet } from "ethers";
import WebSocket from "ws";
import { collectionInterface } from "../server/chain/collection";
import {
  ApiClient,
  AnvilNode,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  TEST_API_KEY,
  deployWithScript,
  directProvider,
} from "../test/api/harness";
import { ChainControl } from "../test/support/chain-control";
import { RpcProxy } from "../test/support/rpc-proxy";
import { RPC_COST_TARGETS, verdict, type Check } from "./checks";
import { envSized, sized } from "./smoke";
import { median } from "./median";

const MINTS = envSized("BENCH_RPC_MINTS", 20, 3);
const BURST = envSized("BENCH_RPC_BURST", 50, 5);
const OPS = envSized("BENCH_RPC_OPS", 10, 2);
const IDLE_MS = envSized("BENCH_RPC_IDLE_S", 60, 2) * 1000;
const BLOCK_MS = sized(1_000, 500);
const LATENCY_MS = 25;
const TARGETS = RPC_COST_TARGETS;
const [OWNER_KEY] = DEV_KEYS;
const AUTH = { authorization: `Bearer ${TEST_API_KEY}` };

const log = (line: string) => console.log(`[rpc-cost] ${line}`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** When each block reached the node, from a subscription of the bench's own, straight to the node. */
class BlockArrivals {
  readonly at = new Map<number, number>();
  private constructor(private readonly socket: WebSocket) {}

  static async start(rpcUrl: string): Promise<BlockArrivals> {
    const socket = new WebSocket(rpcUrl.replace(/^http/, "ws"));
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const arrivals = new BlockArrivals(socket);
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as { params?: { result?: { number?: string } } };
      const number = message.params?.result?.number;
      if (number) arrivals.at.set(Number(BigInt(number)), Date.now());
    });
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }));
    return arrivals;
  }

  /** The arrival of the newest block. */
  last(): { number: number; at: number } {
    const number = Math.max(...this.at.keys());
    return { number, at: this.at.get(number)! };
  }

  stop(): void {
    this.socket.terminate();
  }
}

/** A node with the bench's collection, behind its counting proxy, and when its blocks came. */
interface Setup {
  proxy: RpcProxy;
  control: ChainControl;
  collection: string;
  arrivals: BlockArrivals;
}

interface Figures {
  idlePerMinute: number;
  idleByMethod: string;
  mintCalls: number;
  mintByMethod: string;
  blockToAnswer: number[];
  burstCalls: number;
  setPausedCalls: number;
  setPausedByMethod: string;
}

const NOT_MEASURED: Figures = {
  idlePerMinute: NaN,
  idleByMethod: "",
  mintCalls: NaN,
  mintByMethod: "",
  blockToAnswer: [],
  burstCalls: NaN,
  setPausedCalls: NaN,
  setPausedByMethod: "",
};

const byMethod = (proxy: RpcProxy, per: number) =>
  [...proxy.calls]
    .sort((a, b) => b[1] - a[1])
    .map(([method, count]) => `${method} ${(count / per).toFixed(2)}`)
    .join(", ");

async function newMinter(control: ChainControl): Promise<Wallet> {
  const wallet = new Wallet(Wallet.createRandom().privateKey);
  await control.send("hardhat_setBalance", [wallet.address, "0x56bc75e2d63100000"]);
  return wallet;
}

/** Waits until `phase` (0..1) of the block interval has passed since the newest block reached the node. */
async function atPhase(arrivals: BlockArrivals, phase: number): Promise<void> {
  const start = arrivals.last().number;
  const until = Date.now() + 10 * BLOCK_MS;
  while (arrivals.last().number === start) {
    if (Date.now() > until) throw new Error(`no block announced for ${10 * BLOCK_MS} ms`);
    await sleep(5); // a block that just came: phases from there
  }
  const { at } = arrivals.last();
  await sleep(Math.max(0, at + phase * BLOCK_MS - Date.now()));
}

async function measureService(name: string, wsUrl: string | undefined, setup: Setup): Promise<Figures> {
  const { proxy, control, collection, arrivals } = setup;
  const chains = [{ id: 31337, rpcUrls: [proxy.url], ...(wsUrl ? { wsUrl } : {}) }];
  const service = await ServiceProcess.start({ chains, env: { LOG_LEVEL: "warn", TX_TIMEOUT_MS: "30000" } });
  try {
    const api = new ApiClient(service.url);
    const follow = await api.post("/collections", { address: collection }, AUTH);
    if (follow.status >= 300) throw new Error(`following the collection: ${follow.status} ${follow.text}`);
    const minter = await newMinter(control);
    const mint = () =>
      api.post("/nft/mint", { privateKey: minter.privateKey, contractAddress: collection, mintAmount: 1 });
    // The key's nonce and the collection's check: once per key, not per mint. The collection's
    // price and payment token are kept only once the feed follows the head, which it may not yet
    // in a service just started: a second warm-up mint, after the index caught up, reads them once.
    for (let i = 0; i < 2; i++) {
      const warm = await mint();
      if (warm.status !== 200) throw new Error(`warm-up mint: ${warm.status} ${warm.text}`);
      await sleep(3 * BLOCK_MS); // the index catches up with the warm-up's block
    }

    log(`${name}: idle ${IDLE_MS / 1000} s`);
    proxy.resetCounts();
    await sleep(IDLE_MS);
    const idlePerMinute = (proxy.total() * 60_000) / IDLE_MS;
    const idleByMethod = byMethod(proxy, IDLE_MS / 60_000);

    log(`${name}: ${MINTS} single mints at spread phases of a block`);
    proxy.resetCounts();
    const blockToAnswer: number[] = [];
    for (let k = 0; k < MINTS; k++) {
      await atPhase(arrivals, k / MINTS);
      const sent = Date.now();
      const res = await mint();
      const answered = Date.now();
      if (res.status !== 200) throw new Error(`mint: ${res.status} ${res.text}`);
      if (answered - sent > 5 * BLOCK_MS) log(`${name}: mint ${k} took ${answered - sent} ms`);
      const reached = arrivals.at.get(Number(res.body.blockNumber));
      if (reached !== undefined) blockToAnswer.push(answered - reached);
    }
    const mintCalls = proxy.total() / MINTS;
    const mintByMethod = byMethod(proxy, MINTS);

    log(`${name}: a burst of ${BURST} concurrent mints`);
    proxy.resetCounts();
    const burst = await Promise.all(Array.from({ length: BURST }, mint));
    if (burst.some((res) => res.status !== 200)) throw new Error(`burst: ${burst.map((r) => r.status).join(",")}`);
    const burstCalls = proxy.total() / BURST;

    // The owner key's first write reads its nonce and the collection's paused() once, as the
    // minter's warm-up mint does: a pause and an unpause before the count, so the count is per toggle.
    const setPaused = (state: boolean) =>
      api.post("/nft/setPaused", { privateKey: OWNER_KEY, contractAddress: collection, state });
    for (const state of [true, false]) {
      const res = await setPaused(state);
      if (res.status !== 200) throw new Error(`warm-up setPaused: ${res.status} ${res.text}`);
    }
    log(`${name}: ${OPS} setPaused toggles`);
    proxy.resetCounts();
    for (let i = 0; i < OPS; i++) {
      const res = await setPaused(i % 2 === 0);
      if (res.status !== 200) throw new Error(`setPaused: ${res.status} ${res.text}`);
    }
    const setPausedCalls = proxy.total() / OPS;
    const setPausedByMethod = byMethod(proxy, OPS);
    return {
      idlePerMinute,
      idleByMethod,
      mintCalls,
      mintByMethod,
      blockToAnswer,
      burstCalls,
      setPausedCalls,
      setPausedByMethod,
    };
  } finally {
    await service.stop();
  }
}

/** The baseline: a raw ethers client minting through the same proxy, the same way. */
async function measureRaw(setup: Setup) {
  const { proxy, control, collection, arrivals } = setup;
  const provider = new JsonRpcProvider(proxy.url, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    pollingInterval: 100,
  });
  try {
    const minter = (await newMinter(control)).connect(provider);
    const contract = new Contract(collection, collectionInterface(), minter);
    const cost = (await contract.cost()) as bigint;
    proxy.resetCounts();
    const blockToAnswer: number[] = [];
    for (let k = 0; k < MINTS; k++) {
      await atPhase(arrivals, k / MINTS);
      const tx = (await contract.mint(1, { value: cost })) as { wait(): Promise<{ blockNumber: number } | null> };
      const receipt = await tx.wait();
      const answered = Date.now();
      const reached = receipt && arrivals.at.get(receipt.blockNumber);
      if (reached) blockToAnswer.push(answered - reached);
    }
    return { calls: proxy.total() / MINTS, byMethod: byMethod(proxy, MINTS), blockToAnswer };
  } finally {
    provider.destroy();
  }
}

async function main(): Promise<void> {
  const node = await ChainNode.start();
  const stops: Array<() => unknown> = [() => node.stop()];
  try {
    const control = new ChainControl(node.rpcUrl);
    const chain = directProvider(node.rpcUrl);
    stops.push(() => chain.destroy());
    const setup = await setUp(node.rpcUrl, control, stops, async () => {
      await control.setAutomine(false);
      await control.setIntervalMining(BLOCK_MS);
    });
    log(`node ${node.rpcUrl}, ${BLOCK_MS} ms blocks, proxy +${LATENCY_MS} ms each way, collection ${setup.collection}`);

    const raw = await measureRaw(setup);
    // BENCH_RPC_MODES=polling measures a head without `wsUrl` (a build from before subscriptions).
    const modes = (process.env.BENCH_RPC_MODES ?? "subscription,polling,anvil").split(",");
    const skipped = () => Promise.resolve(NOT_MEASURED);
    const subscribed = modes.includes("subscription")
      ? await measureService("subscription", setup.proxy.wsUrl, setup)
      : await skipped();
    const polled = modes.includes("polling") ? await measureService("polling", undefined, setup) : await skipped();
    const anvil = modes.includes("anvil") ? await measureOnAnvil() : await skipped();

    const p50 = (values: number[]) => `${median(values)} ms`;
    console.table({
      "raw ethers client": { "calls/mint": raw.calls.toFixed(2), "block → answer p50": p50(raw.blockToAnswer) },
      subscription: {
        "calls/mint": subscribed.mintCalls.toFixed(2),
        "block → answer p50": p50(subscribed.blockToAnswer),
        "calls/mint, burst": subscribed.burstCalls.toFixed(2),
        "calls/setPaused": subscribed.setPausedCalls.toFixed(2),
        "idle calls/min": subscribed.idlePerMinute.toFixed(1),
      },
      polling: {
        "calls/mint": polled.mintCalls.toFixed(2),
        "block → answer p50": p50(polled.blockToAnswer),
        "calls/mint, burst": polled.burstCalls.toFixed(2),
        "calls/setPaused": polled.setPausedCalls.toFixed(2),
        "idle calls/min": polled.idlePerMinute.toFixed(1),
      },
      "anvil, subscription": {
        "calls/mint": anvil.mintCalls.toFixed(2),
        "block → answer p50": p50(anvil.blockToAnswer),
        "calls/mint, burst": anvil.burstCalls.toFixed(2),
        "calls/setPaused": anvil.setPausedCalls.toFixed(2),
        "idle calls/min": anvil.idlePerMinute.toFixed(1),
      },
    });
    for (const [name, f] of [
      ["subscription", subscribed],
      ["polling", polled],
      ["anvil", anvil],
    ] as const) {
      log(`${name}: mint by method: ${f.mintByMethod}`);
      log(`${name}: setPaused by method: ${f.setPausedByMethod}`);
      log(`${name}: idle by method (a minute): ${f.idleByMethod || "none"}`);
      log(`${name}: block → answer (ms): ${f.blockToAnswer.join(" ")}`);
    }
    log(`raw: mint by method: ${raw.byMethod}`);
    log(`raw: block → answer (ms): ${raw.blockToAnswer.join(" ")}`);

    const checks: Check[] = [
      {
        ok: subscribed.burstCalls <= TARGETS.mint,
        text: `calls per mint in a burst of ${BURST}, subscription: ${subscribed.burstCalls.toFixed(2)} (single mints ${subscribed.mintCalls.toFixed(2)}, raw client's single mints ${raw.calls.toFixed(2)}; target <= ${TARGETS.mint})`,
      },
      {
        ok: subscribed.setPausedCalls <= TARGETS.setPaused,
        text: `calls per setPaused, subscription: ${subscribed.setPausedCalls.toFixed(2)} (target <= ${TARGETS.setPaused})`,
      },
      {
        ok: subscribed.idlePerMinute <= TARGETS.idlePerMinute,
        text: `idle calls a minute, subscription and a followed collection: ${subscribed.idlePerMinute.toFixed(1)} (polling alone: ${polled.idlePerMinute.toFixed(1)}; target <= ${TARGETS.idlePerMinute})`,
      },
      {
        ok: median(subscribed.blockToAnswer) <= TARGETS.blockToAnswerMs,
        text: `block to answer p50, subscription: ${median(subscribed.blockToAnswer)} ms (raw client ${median(raw.blockToAnswer)} ms, polling ${median(polled.blockToAnswer)} ms; target <= ${TARGETS.blockToAnswerMs} ms)`,
      },
    ];
    if (modes.includes("anvil"))
      checks.push({
        ok: anvil.burstCalls <= TARGETS.anvilMint,
        text: `calls per mint in a burst of ${BURST} on anvil, subscription: ${anvil.burstCalls.toFixed(2)} (single mints ${anvil.mintCalls.toFixed(2)}; target <= ${TARGETS.anvilMint})`,
      });
    process.exitCode = verdict(checks);
  } finally {
    for (const stop of stops.reverse()) await Promise.resolve(stop()).catch(() => {});
  }
}

/**
 * The collection deployed on the node at `rpcUrl` (before its blocks come by time: `startBlocks`),
 * the counting proxy in front of it and the bench's own head subscription; their stops go on `stops`.
 */
async function setUp(
  rpcUrl: string,
  control: ChainControl,
  stops: Array<() => unknown>,
  startBlocks: () => Promise<void>,
): Promise<Setup> {
  const collection = await deployWithScript(rpcUrl, { NFT_MAX_SUPPLY: "100000" });
  const proxy = await RpcProxy.start(rpcUrl, { latencyMs: LATENCY_MS });
  stops.push(() => proxy.close());
  await startBlocks();
  const arrivals = await BlockArrivals.start(rpcUrl);
  stops.push(() => arrivals.stop());
  return { proxy, control, collection, arrivals };
}

/** The subscription's figures on anvil (1 s blocks, behind its own counting proxy): another node than Hardhat's. */
async function measureOnAnvil(): Promise<Figures> {
  const node = await AnvilNode.start(31337, ["--block-time", String(BLOCK_MS / 1000)]);
  const stops: Array<() => unknown> = [() => node.stop()];
  try {
    const control = new ChainControl(node.rpcUrl);
    // Older than anvil's finalized lag (64 blocks), as a public chain is: its finalized block is not genesis.
    await control.send("anvil_mine", ["0x64"]);
    const setup = await setUp(node.rpcUrl, control, stops, async () => {}); // mining since its start
    log(`anvil ${node.rpcUrl}, ${BLOCK_MS} ms blocks, collection ${setup.collection}`);
    return await measureService("anvil", setup.proxy.wsUrl, setup);
  } finally {
    for (const stop of stops.reverse()) await Promise.resolve(stop()).catch(() => {});
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
