/**
 * The transaction engine on a chain with real block times, through an RPC endpoint with latency:
 *  (a) 1 s blocks (automine off, `evm_setIntervalMining 1000`), 25 ms added each way by an RpcProxy:
 *      BENCH_MINTS concurrent POST /nft/mint {mintAmount:1} from one key, against a raw ethers client
 *      that pipelines nonces on another key (cost, fees, gas and pending nonce read once; every
 *      transaction signed with consecutive nonces, broadcast at once, then every receipt awaited).
 *      Rounds alternate, each starts right after a new block; the median round of each side is shown.
 *      The raw client is ethers' JsonRpcProvider with its defaults (it batches calls made together)
 *      plus staticNetwork, cacheTimeout -1 and pollingInterval 100. CPU seconds used by the
 *      service, the node and this process are shown per round (Linux /proc), since two shared cores
 *      make wall times depend on the machine's load.
 *  (b) JSON-RPC calls per operation, counted at the proxy, on an automining node: tokenURI,
 *      total-supply, mint and setPaused, BENCH_OPS sequential requests each.
 *  (c) three service processes on one PostgreSQL, 1 s blocks: BENCH_INSTANCE_MINTS mints from one
 *      key spread round-robin over the three, all at once; supply and nonce must grow by as many.
 * Run: npm run bench:blocktime   (BENCH_MINTS, BENCH_ROUNDS, BENCH_OPS, BENCH_INSTANCE_MINTS)
 */
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { JsonRpcProvider, Network, Wallet } from "ethers";
import { collectionInterface } from "../server/chain/collection";
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
} from "../test/api/harness";
import { ChainControl } from "../test/support/chain-control";
import { RpcProxy } from "../test/support/rpc-proxy";
import { startPostgresServer } from "../test/users/postgres-server";

const MINTS = Number(process.env.BENCH_MINTS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const OPS = Number(process.env.BENCH_OPS ?? 50);
const INSTANCE_MINTS = Number(process.env.BENCH_INSTANCE_MINTS ?? 300);
const LATENCY_MS = 25;
const BLOCK_MS = 1_000;
const BLOCK_POLL_MS = "100";
const TX_TIMEOUT_MS = "60000";
/** How long operations answered 202 are polled until they are final. */
const SETTLE_MS = 120_000;

// #0 deployed the collection (owner), #1 mints through the service, #2 with raw ethers,
// #3 through the three instances, #4 reads total-supply.
const [OWNER_KEY, SERVICE_KEY, RAW_KEY, INSTANCES_KEY, READER_KEY] = DEV_KEYS;
const SERVICE_ENV = { BLOCK_POLL_MS, TX_TIMEOUT_MS };

interface Round {
  wallMs: number;
  statuses: Record<string, number>;
  /** Answers other than 200 and 202, or failed raw transactions. */
  errors: number;
  /** Answered 202: not confirmed within TX_TIMEOUT_MS. */
  notConfirmed: number;
  blocks: number[];
  nonceDelta: number;
  samples: string[];
  /** CPU seconds spent during the round by the service's processes, the node's, and this process. */
  cpu: CpuFigures;
}

interface CpuFigures {
  service?: number;
  node?: number;
  bench: number;
}

const iface = collectionInterface();

/**
 * CPU seconds used so far by a process group (Linux /proc; undefined elsewhere). The harness
 * starts every child in its own group, led by the child it spawned; that child is private to it,
 * so it is read through a cast: a measurement aid only.
 */
function groupCpuSeconds(owner: ServiceProcess | ChainNode | undefined): number | undefined {
  const pgid = (owner as unknown as { spawned?: { child?: ChildProcess } } | undefined)?.spawned?.child?.pid;
  if (pgid === undefined || process.platform !== "linux") return undefined;
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // After "pid (comm) ": state, ppid, pgrp, … utime and stime are fields 14 and 15 of the line.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks / 100; // USER_HZ
}

/** Starts measuring CPU; the returned function answers the seconds used since. */
function cpuMeter(service: ServiceProcess | undefined, node: ChainNode): () => CpuFigures {
  const before = { service: groupCpuSeconds(service), node: groupCpuSeconds(node), bench: process.cpuUsage() };
  return () => {
    const delta = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined ? undefined : a - b;
    const bench = process.cpuUsage(before.bench);
    return {
      service: delta(groupCpuSeconds(service), before.service),
      node: delta(groupCpuSeconds(node), before.node),
      bench: (bench.user + bench.system) / 1e6,
    };
  };
}

const cleanups: Array<() => Promise<unknown>> = [];
/** Runs `stop` at the end, whatever happens; last registered, first run. */
function onCleanup(stop: () => Promise<unknown>): void {
  cleanups.push(stop);
}

async function main(): Promise<void> {
  const node = await ChainNode.start();
  onCleanup(() => node.stop());
  const control = new ChainControl(node.rpcUrl);
  const chain = directProvider(node.rpcUrl);
  onCleanup(async () => chain.destroy());

  const collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "100000" });
  const proxy = await RpcProxy.start(node.rpcUrl, { latencyMs: LATENCY_MS });
  onCleanup(() => proxy.close());
  log(`node ${node.rpcUrl}, collection ${collection}, proxy ${proxy.url} (+${LATENCY_MS} ms each way)`);

  const service = await ServiceProcess.start({ rpcUrl: proxy.url, env: SERVICE_ENV });
  const stopService = once(() => service.stop());
  onCleanup(stopService);
  const api = new ApiClient(service.url);

  // ---- (a) 1 s blocks: the service against raw pipelined ethers ----
  await control.setAutomine(false);
  await control.setIntervalMining(BLOCK_MS);
  log(`phase (a): 1 s blocks, ${ROUNDS} rounds of ${MINTS} mints each way, BLOCK_POLL_MS=${BLOCK_POLL_MS}`);
  log(
    `  (machine: load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")})`,
  );
  // Warm-up (JIT, the service's collection check and nonce seed, the raw key's first mint): not measured.
  await serviceRound(api, chain, control, collection, 10, () => cpuMeter(service, node));
  await rawRound(proxy.url, chain, control, collection, 10, () => cpuMeter(undefined, node));

  const serviceRounds: Round[] = [];
  const rawRounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    serviceRounds.push(await serviceRound(api, chain, control, collection, MINTS, () => cpuMeter(service, node)));
    printRound(`service round ${i + 1}`, serviceRounds[i]);
    rawRounds.push(await rawRound(proxy.url, chain, control, collection, MINTS, () => cpuMeter(undefined, node)));
    printRound(`raw     round ${i + 1}`, rawRounds[i]);
  }
  const serviceMedian = median(serviceRounds);
  const rawMedian = median(rawRounds);
  const serviceErrors = sum(serviceRounds.map((r) => r.errors + r.notConfirmed));
  const rawErrors = sum(rawRounds.map((r) => r.errors));
  const maxServiceBlocks = Math.max(...serviceRounds.map((r) => r.blocks.length));
  const ratio = rawMedian.wallMs / serviceMedian.wallMs;
  console.table({
    [`service (${MINTS} × POST /nft/mint)`]: tableRow(serviceMedian, serviceRounds),
    [`raw ethers (${MINTS} pipelined nonces)`]: tableRow(rawMedian, rawRounds),
  });
  const results: Array<[boolean, string]> = [
    [ratio >= 0.8, `raw wall / service wall = ${ratio.toFixed(2)}x (target >= 0.8x)`],
    [maxServiceBlocks <= 2, `service blocks used per round: at most ${maxServiceBlocks} (target <= 2)`],
    [serviceErrors === 0, `service errors (non-200, incl. 202) over all rounds: ${serviceErrors} (target 0)`],
    [rawErrors === 0, `raw errors over all rounds: ${rawErrors}`],
  ];

  // ---- (b) JSON-RPC calls per operation, automining ----
  await control.setIntervalMining(0);
  await waitForEmptyMempool(control);
  await control.setAutomine(true);
  log(`phase (b): automine, ${OPS} sequential requests per operation, calls counted at the proxy`);
  let paused = false;
  const bodies: Record<string, [string, () => unknown]> = {
    tokenURI: ["/nft/tokenURI", () => ({ privateKey: READER_KEY, contractAddress: collection, tokenId: "1" })],
    "total-supply": ["/nft/total-supply", () => ({ privateKey: READER_KEY, contractAddress: collection })],
    mint: ["/nft/mint", () => ({ privateKey: SERVICE_KEY, contractAddress: collection, mintAmount: 1 })],
    setPaused: [
      "/nft/setPaused",
      () => ({ privateKey: OWNER_KEY, contractAddress: collection, state: (paused = !paused) }),
    ],
  };
  const perOp: Record<string, Record<string, string | number>> = {};
  let mintCalls = Infinity;
  let opErrors = 0;
  for (const [name, [path, body]] of Object.entries(bodies)) {
    const warm = await api.post(path, body()); // steady state: not counted
    if (warm.status !== 200) opErrors++;
    proxy.resetCounts();
    const statuses: Record<string, number> = {};
    for (let i = 0; i < OPS; i++) {
      const res = await api.post(path, body());
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      if (res.status !== 200) {
        opErrors++;
        if (opErrors <= 3) log(`  ${name}: ${res.status} ${res.text.slice(0, 300)}`);
      }
    }
    const total = proxy.total();
    if (name === "mint") mintCalls = total / OPS;
    const byMethod = [...proxy.calls]
      .sort((a, b) => b[1] - a[1])
      .map(([method, count]) => `${method} ${(count / OPS).toFixed(2)}`)
      .join(", ");
    perOp[name] = { "calls/op": (total / OPS).toFixed(2), statuses: JSON.stringify(statuses), "by method": byMethod };
  }
  if (paused) await api.post("/nft/setPaused", { privateKey: OWNER_KEY, contractAddress: collection, state: false });
  console.table(perOp);
  results.push([mintCalls <= 4.0, `mint JSON-RPC calls/op: ${mintCalls.toFixed(2)} (target <= 4.0)`]);
  results.push([opErrors === 0, `non-200 answers in phase (b): ${opErrors}`]);
  await stopService(); // two cores: the three instances need them

  // ---- (c) three instances on one PostgreSQL, 1 s blocks ----
  log(`phase (c): 3 services on one PostgreSQL, 1 s blocks, ${INSTANCE_MINTS} mints from one key round-robin`);
  const pg = await startPostgresServer();
  onCleanup(() => pg.stop());
  const databaseUrl = await pg.createDatabase();
  const started = await Promise.allSettled(
    [0, 1, 2].map(() =>
      ServiceProcess.start({ rpcUrl: proxy.url, env: { ...SERVICE_ENV, DATABASE_URL: databaseUrl } }),
    ),
  );
  for (const s of started) if (s.status === "fulfilled") onCleanup(() => s.value.stop());
  const instances = started.map((s) => {
    if (s.status === "rejected") throw s.reason;
    return s.value;
  });
  const clients = instances.map((s) => new ApiClient(s.url));
  // Each instance reads the collection once before the load, as a running deployment would have.
  await Promise.all(
    clients.map((c) => c.post("/nft/total-supply", { privateKey: READER_KEY, contractAddress: collection })),
  );
  await control.setAutomine(false);
  await control.setIntervalMining(BLOCK_MS);

  const minter = new Wallet(INSTANCES_KEY);
  const nft = collectionAt(collection, chain);
  const supplyBefore: bigint = await nft.totalSupply();
  const nonceBefore = await chain.getTransactionCount(minter.address, "latest");
  await nextBlock(control);
  const cpuBefore = instances.map(groupCpuSeconds);
  const nodeCpuBefore = groupCpuSeconds(node);
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: INSTANCE_MINTS }, (_, i) =>
      clients[i % 3]
        .post("/nft/mint", { privateKey: INSTANCES_KEY, contractAddress: collection, mintAmount: 1 })
        .catch((err: unknown) => failed(err)),
    ),
  );
  const wallMs = performance.now() - t0;
  const cpuServices = instances.map((s, i) => (groupCpuSeconds(s) ?? NaN) - (cpuBefore[i] ?? NaN));
  const cpuNode = (groupCpuSeconds(node) ?? NaN) - (nodeCpuBefore ?? NaN);
  const statuses = countStatuses(answers);
  const settled = await settleOperations(clients, answers);
  const supplyAfter: bigint = await nft.totalSupply();
  const nonceAfter = await chain.getTransactionCount(minter.address, "latest");
  const operations = countBy(settled.map((s) => s.status));
  const blocks = new Set(settled.flatMap((s) => (s.blockNumber === undefined ? [] : [s.blockNumber])));
  log(`  wall ${fmt(wallMs)} (first request to last answer); answers ${JSON.stringify(statuses)}`);
  log(`  CPU s: services ${cpuServices.map((c) => c.toFixed(2)).join(" + ")}, node ${cpuNode.toFixed(2)}`);
  log(`  operations after settling: ${JSON.stringify(operations)}; blocks used: ${blocks.size} [${[...blocks]}]`);
  log(
    `  supply ${supplyBefore} -> ${supplyAfter} (+${supplyAfter - supplyBefore}), nonce +${nonceAfter - nonceBefore}`,
  );
  for (const sample of sampleErrors(answers)) log(`  sample answer: ${sample}`);
  const accepted = (statuses["200"] ?? 0) + (statuses["202"] ?? 0);
  results.push([accepted === INSTANCE_MINTS, `3 instances: ${accepted}/${INSTANCE_MINTS} accepted (200 or 202)`]);
  results.push([
    operations.confirmed === INSTANCE_MINTS,
    `3 instances: ${operations.confirmed ?? 0}/${INSTANCE_MINTS} operations confirmed`,
  ]);
  results.push([
    supplyAfter - supplyBefore === BigInt(INSTANCE_MINTS) && nonceAfter - nonceBefore === INSTANCE_MINTS,
    `3 instances: supply +${supplyAfter - supplyBefore}, nonce +${nonceAfter - nonceBefore} (both must be +${INSTANCE_MINTS})`,
  ]);
  if (operations.confirmed !== INSTANCE_MINTS || accepted !== INSTANCE_MINTS) {
    for (const [i, instance] of instances.entries()) {
      const lines = instance
        .output()
        .split("\n")
        .filter((line) => /"level":(40|50|60)/.test(line) || /refused|abandon|re-signed|gap|replaced/.test(line));
      log(`  instance ${i} warnings (${lines.length}):`);
      for (const line of lines.slice(0, 15)) log(`    ${line.slice(0, 400)}`);
    }
  }

  console.log("");
  for (const [ok, text] of results) console.log(`${ok ? "PASS" : "FAIL"}: ${text}`);
  process.exitCode = results.every(([ok]) => ok) ? 0 : 1;
}

/** MINTS concurrent POST /nft/mint from SERVICE_KEY, started right after a new block. */
async function serviceRound(
  api: ApiClient,
  chain: JsonRpcProvider,
  control: ChainControl,
  collection: string,
  count: number,
  meter: () => () => CpuFigures,
): Promise<Round> {
  const address = new Wallet(SERVICE_KEY).address;
  const nonceBefore = await chain.getTransactionCount(address, "latest");
  await nextBlock(control);
  const cpu = meter();
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: count }, () =>
      api
        .post("/nft/mint", { privateKey: SERVICE_KEY, contractAddress: collection, mintAmount: 1 })
        .catch((err: unknown) => failed(err)),
    ),
  );
  const wallMs = performance.now() - t0;
  const cpuUsed = cpu();
  const statuses = countStatuses(answers);
  const settled = await settleOperations([api], answers);
  const nonceAfter = await chain.getTransactionCount(address, "latest");
  return {
    wallMs,
    statuses,
    errors: answers.filter((a) => a.status !== 200 && a.status !== 202).length,
    notConfirmed: statuses["202"] ?? 0,
    blocks: [...new Set(settled.flatMap((s) => (s.blockNumber === undefined ? [] : [s.blockNumber])))].sort(
      (a, b) => a - b,
    ),
    nonceDelta: nonceAfter - nonceBefore,
    samples: sampleErrors(answers),
    cpu: cpuUsed,
  };
}

/**
 * What a careful ethers user does for `count` mints from one key: reads cost, fees and the pending
 * nonce once, estimates gas once, signs every transaction with consecutive nonces, broadcasts them
 * all concurrently, then waits for every receipt.
 */
async function rawRound(
  proxyUrl: string,
  chain: JsonRpcProvider,
  control: ChainControl,
  collection: string,
  count: number,
  meter: () => () => CpuFigures,
): Promise<Round> {
  const provider = new JsonRpcProvider(proxyUrl, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    pollingInterval: 100,
  });
  const wallet = new Wallet(RAW_KEY);
  const nonceBefore = await chain.getTransactionCount(wallet.address, "latest");
  await nextBlock(control);
  const cpu = meter();
  const t0 = performance.now();
  const data = iface.encodeFunctionData("mint", [1]);
  let errors = 0;
  const samples: string[] = [];
  const blocks = new Set<number>();
  try {
    const [costWord, fees, nonce] = await Promise.all([
      provider.call({ to: collection, data: iface.encodeFunctionData("cost") }),
      provider.getFeeData(),
      provider.getTransactionCount(wallet.address, "pending"),
    ]);
    const value = iface.decodeFunctionResult("cost", costWord)[0] as bigint;
    const gasLimit = await provider.estimateGas({ from: wallet.address, to: collection, data, value });
    const signed = await Promise.all(
      Array.from({ length: count }, (_, i) =>
        wallet.signTransaction({
          type: 2,
          chainId: 31337,
          nonce: nonce + i,
          to: collection,
          data,
          value,
          gasLimit,
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        }),
      ),
    );
    const sent = await Promise.allSettled(signed.map((raw) => provider.broadcastTransaction(raw)));
    const receipts = await Promise.allSettled(
      sent.map((s) => {
        if (s.status === "rejected") return Promise.reject(s.reason as Error);
        return provider.waitForTransaction(s.value.hash, 1, 120_000);
      }),
    );
    for (const r of receipts) {
      if (r.status === "rejected" || r.value === null || r.value.status !== 1) {
        errors++;
        if (samples.length < 3)
          samples.push(r.status === "rejected" ? String(r.reason).slice(0, 200) : `receipt ${r.value?.status}`);
      } else {
        blocks.add(r.value.blockNumber);
      }
    }
  } finally {
    provider.destroy();
  }
  const wallMs = performance.now() - t0;
  const cpuUsed = cpu();
  const nonceAfter = await chain.getTransactionCount(wallet.address, "latest");
  return {
    wallMs,
    statuses: {},
    errors,
    notConfirmed: 0,
    blocks: [...blocks].sort((a, b) => a - b),
    nonceDelta: nonceAfter - nonceBefore,
    samples,
    cpu: cpuUsed,
  };
}

interface Settled {
  status: string;
  blockNumber?: number;
}

/**
 * The final state of every answered write: 200 answers as they are; 202 answers polled on
 * GET /nft/operations/{id} (round-robin over `clients`) until confirmed or failed, for SETTLE_MS.
 */
async function settleOperations(clients: ApiClient[], answers: ApiResponse[]): Promise<Settled[]> {
  const deadline = Date.now() + SETTLE_MS;
  return Promise.all(
    answers.map(async (answer, i): Promise<Settled> => {
      if (answer.status === 200) return { status: "confirmed", blockNumber: answer.body.blockNumber as number };
      const id = answer.body.operationId as string | undefined;
      if (answer.status !== 202 || !id) return { status: `answered ${answer.status}` };
      for (;;) {
        const res = await clients[i % clients.length].get(`/nft/operations/${id}`);
        const status = String(res.body.status ?? `GET ${res.status}`);
        if (status === "confirmed" || status === "failed")
          return { status, blockNumber: res.body.blockNumber as number | undefined };
        if (Date.now() > deadline) return { status: `still ${status}` };
        await sleep(250);
      }
    }),
  );
}

/** Resolves just after the chain's head moves. */
async function nextBlock(control: ChainControl): Promise<void> {
  const start = await control.blockNumber();
  while ((await control.blockNumber()) === start) await sleep(10);
}

async function waitForEmptyMempool(control: ChainControl): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await control.pendingTransactions()).length > 0) {
    if (Date.now() > deadline) throw new Error("the mempool did not drain");
    await sleep(200);
  }
}

function failed(err: unknown): ApiResponse {
  return { status: 0, headers: new Headers(), text: String(err), body: {} };
}

function countStatuses(answers: ApiResponse[]): Record<string, number> {
  return countBy(answers.map((a) => String(a.status)));
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

/** Up to three distinct non-200 answers, shortened. */
function sampleErrors(answers: ApiResponse[]): string[] {
  const seen = new Set<string>();
  for (const a of answers) {
    if (a.status === 200) continue;
    seen.add(`${a.status} ${a.text.slice(0, 300)}`);
    if (seen.size >= 3) break;
  }
  return [...seen];
}

function median(rounds: Round[]): Round {
  return [...rounds].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(rounds.length / 2)];
}

function tableRow(m: Round, rounds: Round[]) {
  return {
    "median wall": fmt(m.wallMs),
    rounds: rounds.map((r) => fmt(r.wallMs)).join(" / "),
    "blocks (median round)": m.blocks.length,
    errors: sum(rounds.map((r) => r.errors)),
    "202s": sum(rounds.map((r) => r.notConfirmed)),
  };
}

function printRound(name: string, r: Round): void {
  const statuses = Object.keys(r.statuses).length > 0 ? ` answers ${JSON.stringify(r.statuses)},` : "";
  log(
    `  ${name}: wall ${fmt(r.wallMs)},${statuses} errors ${r.errors}, blocks ${r.blocks.length} [${r.blocks}], nonce +${r.nonceDelta}; CPU s: ${cpuText(r.cpu)}`,
  );
  for (const s of r.samples) log(`    sample: ${s}`);
}

const cpuText = (c: CpuFigures) =>
  [
    c.service === undefined ? "" : `service ${c.service.toFixed(2)}`,
    `node ${c.node?.toFixed(2) ?? "n/a"}`,
    `bench ${c.bench.toFixed(2)}`,
  ]
    .filter(Boolean)
    .join(", ");
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const log = (line: string) => console.log(line);

function once(fn: () => Promise<unknown>): () => Promise<unknown> {
  let done: Promise<unknown> | undefined;
  return () => (done ??= fn());
}

async function cleanup(): Promise<void> {
  for (const stop of cleanups.splice(0).reverse()) {
    await stop().catch((err: unknown) => console.error("cleanup:", err));
  }
}

process.once("SIGINT", () => {
  void cleanup().finally(() => process.exit(130));
});

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(cleanup);
