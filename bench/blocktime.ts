/**
 * The transaction engine as a user meets it: a separate `hardhat node` mining a block every 1 s
 * (automine off, `evm_setIntervalMining 1000`), behind an RpcProxy adding 25 ms each way.
 *  (a) On PGlite, then on PostgreSQL: a service started fresh takes BENCH_MINTS concurrent
 *      POST /nft/mint {mintAmount:1} from a key it has never seen (burst 1), then, right after
 *      the last answer, BENCH_MINTS more from the same key (burst 2). No warm-up before either.
 *      The baseline is a raw ethers client over the same proxy, run the same way on another new key
 *      just before: it reads cost, fees and the pending nonce once, estimates gas once, signs every
 *      transaction at consecutive nonces, broadcasts them all at once, then awaits every receipt
 *      (ethers' JsonRpcProvider with staticNetwork, cacheTimeout -1 and pollingInterval 100; the
 *      service polls the head as often, BLOCK_POLL_MS=100). The service's requests go out at once
 *      over kept-alive node:http connections. Each side's first burst starts right after a new
 *      block; its second starts when the first is answered, wherever the chain is.
 *      Then BENCH_ALIGNED_ROUNDS (3) rounds of a warm burst each side, each starting right after a
 *      new block, in turn: the median ratio is the figure, free of where in a block a burst began.
 *      Printed per burst: wall time (first request to last answer), blocks spanned by its
 *      transactions and how many blocks after the burst's start the first one came, answers, and
 *      the ratio raw wall / service wall. CPU seconds of the service, the node and this process
 *      are shown (Linux /proc): two shared cores make wall times depend on the machine's load.
 *      The service logs at info; its "reorg" lines are counted over the whole run.
 *  (b) JSON-RPC calls per operation, counted at the proxy, on an automining node: tokenURI,
 *      total-supply, mint and setPaused, BENCH_OPS sequential requests each.
 *  (c) three service processes on one PostgreSQL, 1 s blocks: BENCH_INSTANCE_MINTS mints from one
 *      key spread round-robin over the three, all at once; supply and nonce must grow by as many.
 * Run: npm run bench:blocktime   (BENCH_MINTS, BENCH_OPS, BENCH_INSTANCE_MINTS, BENCH_ALIGNED_ROUNDS; BENCH_STORES=PGlite
 * or PostgreSQL runs (a) on one store only and skips (b) and (c); BENCH_CPU_PROFILE=dir writes a V8
 * CPU profile of each service process into dir)
 */
import type { ChildProcess } from "node:child_process";
import http from "node:http";
import { readdirSync } from "node:fs";
import { loadavg } from "node:os";
import { JsonRpcProvider, Network, Wallet } from "ethers";
import { collectionInterface } from "../server/chain/collection";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ROOT,
  ServiceProcess,
  collectionAt,
  deployWithScript,
  directProvider,
  npmStartCommand,
  sleep,
  type ApiResponse,
} from "../test/api/harness";
import { ChainControl } from "../test/support/chain-control";
import { RpcProxy } from "../test/support/rpc-proxy";
import { startPostgresServer, type PostgresServer } from "../test/users/postgres-server";
import { blocktimeAlignedChecks, blocktimeBurstChecks, verdict } from "./checks";
import { median } from "./median";
import { processCpu } from "./proc-cpu";
import { envSized, sized } from "./smoke";

const MINTS = envSized("BENCH_MINTS", 200, 10);
const OPS = envSized("BENCH_OPS", 50, 5);
const INSTANCE_MINTS = envSized("BENCH_INSTANCE_MINTS", 300, 10);
/** Warm bursts each side, each starting right after a new block, after bursts 1 and 2. */
const ALIGNED_ROUNDS = envSized("BENCH_ALIGNED_ROUNDS", 3, 1);
const CPU_PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
const STORES = (process.env.BENCH_STORES ?? "PGlite,PostgreSQL").split(",") as Array<"PGlite" | "PostgreSQL">;
const ALL_PHASES = process.env.BENCH_STORES === undefined;
const LATENCY_MS = 25;
/** Smoke mode mines faster: the same bursts and phases, in less waiting. */
const BLOCK_MS = sized(1_000, 250);
const POLL_MS = 100;
const TX_TIMEOUT_MS = "60000";
/** How long operations answered 202 are polled until they are final. */
const SETTLE_MS = 120_000;
/** Targets of issue 15: BLOCKTIME_TARGETS in ./checks. */

// #0 deployed the collection (owner), #3 mints through the three instances, #4 reads.
const [OWNER_KEY, , , INSTANCES_KEY, READER_KEY] = DEV_KEYS;
const SERVICE_ENV = { BLOCK_POLL_MS: String(POLL_MS), TX_TIMEOUT_MS, LOG_LEVEL: "info" };
/** npm start's command, with V8's CPU profiler on when BENCH_CPU_PROFILE names a directory. */
const SERVICE_ENTRY = CPU_PROFILE_DIR
  ? (() => {
      const [command, ...args] = npmStartCommand();
      return { command, args: ["--cpu-prof", `--cpu-prof-dir=${CPU_PROFILE_DIR}`, ...args], cwd: ROOT };
    })()
  : undefined;

interface Burst {
  wallMs: number;
  statuses: Record<string, number>;
  /** Answers other than 200 and 202, or failed raw transactions. */
  errors: number;
  /** Answered 202: not confirmed within TX_TIMEOUT_MS. */
  notConfirmed: number;
  /** Blocks holding the burst's transactions. */
  blocks: number[];
  /** Transactions of the burst in each of `blocks`. */
  perBlock: Record<number, number>;
  /** The head when the burst started. */
  startHead: number;
  nonceDelta: number;
  samples: string[];
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
  let ms = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cpu = processCpu(entry); // undefined: gone meanwhile
    if (cpu?.pgrp === pgid) ms += cpu.ms;
  }
  return ms / 1000;
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

interface Setup {
  node: ChainNode;
  control: ChainControl;
  chain: JsonRpcProvider;
  proxy: RpcProxy;
  collection: string;
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
  const pg = await startPostgresServer();
  onCleanup(() => pg.stop());
  const setup: Setup = { node, control, chain, proxy, collection };
  log(`node ${node.rpcUrl}, collection ${collection}, proxy ${proxy.url} (+${LATENCY_MS} ms each way)`);
  log(`machine: ${machineLoad()}`);

  const results: Array<[boolean, string]> = [];
  const table: Record<string, Record<string, string | number>> = {};
  let reorgLines = 0;

  // ---- (a) two bursts from a new key, on each store ----
  for (const backend of STORES) {
    await control.setAutomine(false);
    await control.setIntervalMining(BLOCK_MS);
    const env = backend === "PostgreSQL" ? { ...SERVICE_ENV, DATABASE_URL: await pg.createDatabase() } : SERVICE_ENV;
    const service = await ServiceProcess.start({ rpcUrl: proxy.url, env, entry: SERVICE_ENTRY });
    const stopService = once(() => service.stop());
    onCleanup(stopService);
    const api = new ApiClient(service.url);
    log(
      `phase (a), ${backend}: 2 bursts of ${MINTS} mints from a new key each way, ${BLOCK_MS / 1000} s blocks (${machineLoad()})`,
    );

    const rawKey = await newKey(chain);
    const raw1 = await rawBurst(setup, rawKey, true);
    printBurst(`raw     burst 1`, raw1);
    const raw2 = await rawBurst(setup, rawKey, false);
    printBurst(`raw     burst 2`, raw2);
    const serviceKey = await newKey(chain);
    const service1 = await serviceBurst(setup, service, api, serviceKey, true);
    printBurst(`service burst 1`, service1);
    const service2 = await serviceBurst(setup, service, api, serviceKey, false);
    printBurst(`service burst 2`, service2);
    // Aligned rounds: both keys warm, each side's burst starting right after a new block, in turn,
    // so that neither side's figure depends on where in a block it happened to start.
    const aligned: number[] = [];
    for (let round = 1; round <= ALIGNED_ROUNDS; round++) {
      const raw = await rawBurst(setup, rawKey, true);
      printBurst(`raw     aligned ${round}`, raw);
      const svc = await serviceBurst(setup, service, api, serviceKey, true);
      printBurst(`service aligned ${round}`, svc);
      if (raw.errors + svc.errors + svc.notConfirmed > 0) log(`  aligned round ${round}: errors or 202s`);
      aligned.push(raw.wallMs / svc.wallMs);
    }
    for (const { ok, text } of blocktimeAlignedChecks(`${backend} aligned rounds`, aligned)) results.push([ok, text]);
    table[`${backend} aligned (median of ${ALIGNED_ROUNDS})`] = {
      ratio: `${median(aligned).toFixed(2)}x`,
      rounds: aligned.map((r) => `${r.toFixed(2)}x`).join(", "),
    };

    for (const [n, raw, svc] of [
      [1, raw1, service1],
      [2, raw2, service2],
    ] as const) {
      const ratio = raw.wallMs / svc.wallMs;
      const name = `${backend} burst ${n} (${n === 1 ? "new key" : "warm"})`;
      table[name] = {
        service: fmt(svc.wallMs),
        raw: fmt(raw.wallMs),
        ratio: `${ratio.toFixed(2)}x`,
        "service blocks": `${span(svc)} (first +${firstDelay(svc)})`,
        "raw blocks": `${span(raw)} (first +${firstDelay(raw)})`,
        "service answers": JSON.stringify(svc.statuses),
      };
      for (const { ok, text } of blocktimeBurstChecks(name, {
        rawMs: raw.wallMs,
        serviceMs: svc.wallMs,
        serviceBlocks: span(svc),
        serviceErrors: svc.errors,
        notConfirmed: svc.notConfirmed,
        rawErrors: raw.errors,
      }))
        results.push([ok, text]);
    }

    if (backend === "PGlite" && ALL_PHASES) results.push(...(await callsPerOperation(setup, api)));
    await stopService();
    reorgLines += countReorgLines(service.output());
    const warnings = service
      .output()
      .split("\n")
      .filter((line) => /"level":(40|50|60)/.test(line));
    if (warnings.length > 0) log(`  service warnings (${warnings.length}), first: ${warnings[0].slice(0, 300)}`);
  }
  console.table(table);

  // ---- (c) three instances on one PostgreSQL, 1 s blocks ----
  if (ALL_PHASES) {
    const instances = await threeInstances(setup, pg);
    results.push(...instances.results);
    reorgLines += instances.reorgLines;
  }

  results.push([reorgLines === 0, `"reorg" log lines over the run: ${reorgLines} (target 0)`]);
  console.log("");
  const exitCode = verdict(results.map(([ok, text]) => ({ ok, text })));
  log(`machine at the end: ${machineLoad()}`);
  process.exitCode = exitCode;
}

/** A key nobody has used, funded with hardhat_setBalance (no transaction, so no nonce moves). */
async function newKey(chain: JsonRpcProvider): Promise<Wallet> {
  const wallet = new Wallet(Wallet.createRandom().privateKey);
  await chain.send("hardhat_setBalance", [wallet.address, "0x56bc75e2d63100000"]); // 100 ether
  return wallet;
}

/** MINTS concurrent POST /nft/mint from `key`; after a new block when `alignToBlock`. */
async function serviceBurst(
  { chain, control, node, collection }: Setup,
  service: ServiceProcess,
  api: ApiClient,
  key: Wallet,
  alignToBlock: boolean,
): Promise<Burst> {
  const nonceBefore = await chain.getTransactionCount(key.address, "latest");
  if (alignToBlock) await nextBlock(control);
  const startHead = await control.blockNumber();
  const cpu = cpuMeter(service, node);
  const t0 = performance.now();
  const answers = await Promise.all(
    Array.from({ length: MINTS }, () =>
      burstClient
        .post(api.baseUrl, "/nft/mint", { privateKey: key.privateKey, contractAddress: collection, mintAmount: 1 })
        .catch((err: unknown) => failed(err)),
    ),
  );
  const wallMs = performance.now() - t0;
  const cpuUsed = cpu();
  const statuses = countStatuses(answers);
  const settled = await settleOperations([api], answers);
  const nonceAfter = await chain.getTransactionCount(key.address, "latest");
  return {
    wallMs,
    statuses,
    errors: answers.filter((a) => a.status !== 200 && a.status !== 202).length,
    notConfirmed: statuses["202"] ?? 0,
    ...blocksOf(settled.flatMap((s) => (s.blockNumber === undefined ? [] : [s.blockNumber]))),
    startHead,
    nonceDelta: nonceAfter - nonceBefore,
    samples: sampleErrors(answers),
    cpu: cpuUsed,
  };
}

/**
 * What a careful ethers user does for MINTS mints from one key: reads cost, fees and the pending
 * nonce once, estimates gas once, signs every transaction with consecutive nonces, broadcasts them
 * all concurrently, then waits for every receipt. A new provider each burst, as a new script run.
 */
async function rawBurst({ chain, control, node, proxy, collection }: Setup, wallet: Wallet, alignToBlock: boolean) {
  const provider = new JsonRpcProvider(proxy.url, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    pollingInterval: POLL_MS,
  });
  const nonceBefore = await chain.getTransactionCount(wallet.address, "latest");
  if (alignToBlock) await nextBlock(control);
  const startHead = await control.blockNumber();
  const cpu = cpuMeter(undefined, node);
  const t0 = performance.now();
  const data = iface.encodeFunctionData("mint", [1]);
  let errors = 0;
  const samples: string[] = [];
  const blocks: number[] = [];
  try {
    const [costWord, fees, nonce] = await Promise.all([
      provider.call({ to: collection, data: iface.encodeFunctionData("cost") }),
      provider.getFeeData(),
      provider.getTransactionCount(wallet.address, "pending"),
    ]);
    const value = iface.decodeFunctionResult("cost", costWord)[0] as bigint;
    const gasLimit = await provider.estimateGas({ from: wallet.address, to: collection, data, value });
    const signed = await Promise.all(
      Array.from({ length: MINTS }, (_, i) =>
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
        blocks.push(r.value.blockNumber);
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
    ...blocksOf(blocks),
    startHead,
    nonceDelta: nonceAfter - nonceBefore,
    samples,
    cpu: cpuUsed,
  } satisfies Burst;
}

/** (b) JSON-RPC calls per operation, counted at the proxy, on an automining node. */
async function callsPerOperation({ control, proxy, collection }: Setup, api: ApiClient) {
  await control.setIntervalMining(0);
  await waitForEmptyMempool(control);
  await control.setAutomine(true);
  log(`phase (b): automine, ${OPS} sequential requests per operation, calls counted at the proxy`);
  let paused = false;
  const minter = new Wallet(Wallet.createRandom().privateKey);
  await control.send("hardhat_setBalance", [minter.address, "0x56bc75e2d63100000"]);
  const bodies: Record<string, [string, () => unknown]> = {
    tokenURI: ["/nft/tokenURI", () => ({ privateKey: READER_KEY, contractAddress: collection, tokenId: "1" })],
    "total-supply": ["/nft/total-supply", () => ({ privateKey: READER_KEY, contractAddress: collection })],
    mint: ["/nft/mint", () => ({ privateKey: minter.privateKey, contractAddress: collection, mintAmount: 1 })],
    setPaused: [
      "/nft/setPaused",
      () => ({ privateKey: OWNER_KEY, contractAddress: collection, state: (paused = !paused) }),
    ],
  };
  const targets: Record<string, number> = { tokenURI: 1.0, mint: 4.0, setPaused: 5.0 };
  const perOp: Record<string, Record<string, string | number>> = {};
  const results: Array<[boolean, string]> = [];
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
    const perCall = proxy.total() / OPS;
    const byMethod = [...proxy.calls]
      .sort((a, b) => b[1] - a[1])
      .map(([method, count]) => `${method} ${(count / OPS).toFixed(2)}`)
      .join(", ");
    perOp[name] = { "calls/op": perCall.toFixed(2), statuses: JSON.stringify(statuses), "by method": byMethod };
    const target = targets[name];
    if (target !== undefined)
      results.push([perCall <= target, `${name} JSON-RPC calls/op: ${perCall.toFixed(2)} (target <= ${target})`]);
  }
  if (paused) await api.post("/nft/setPaused", { privateKey: OWNER_KEY, contractAddress: collection, state: false });
  console.table(perOp);
  results.push([opErrors === 0, `non-200 answers in phase (b): ${opErrors}`]);
  await control.setAutomine(false);
  return results;
}

/** (c) three service processes on one PostgreSQL database, one key round-robin over them. */
async function threeInstances({ control, chain, node, proxy, collection }: Setup, pg: PostgresServer) {
  log(
    `phase (c): 3 services on one PostgreSQL, ${BLOCK_MS / 1000} s blocks, ${INSTANCE_MINTS} mints from one key round-robin`,
  );
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
      burstClient
        .post(clients[i % 3].baseUrl, "/nft/mint", {
          privateKey: INSTANCES_KEY,
          contractAddress: collection,
          mintAmount: 1,
        })
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
  const { blocks } = blocksOf(settled.flatMap((s) => (s.blockNumber === undefined ? [] : [s.blockNumber])));
  log(`  wall ${fmt(wallMs)} (first request to last answer); answers ${JSON.stringify(statuses)}`);
  log(`  CPU s: services ${cpuServices.map((c) => c.toFixed(2)).join(" + ")}, node ${cpuNode.toFixed(2)}`);
  log(`  operations after settling: ${JSON.stringify(operations)}; blocks used: ${blocks.length} [${blocks}]`);
  log(
    `  supply ${supplyBefore} -> ${supplyAfter} (+${supplyAfter - supplyBefore}), nonce +${nonceAfter - nonceBefore}`,
  );
  for (const sample of sampleErrors(answers)) log(`  sample answer: ${sample}`);
  const accepted = (statuses["200"] ?? 0) + (statuses["202"] ?? 0);
  const results: Array<[boolean, string]> = [
    [accepted === INSTANCE_MINTS, `3 instances: ${accepted}/${INSTANCE_MINTS} accepted (200 or 202)`],
    [
      operations.confirmed === INSTANCE_MINTS,
      `3 instances: ${operations.confirmed ?? 0}/${INSTANCE_MINTS} operations confirmed`,
    ],
    [
      supplyAfter - supplyBefore === BigInt(INSTANCE_MINTS) && nonceAfter - nonceBefore === INSTANCE_MINTS,
      `3 instances: supply +${supplyAfter - supplyBefore}, nonce +${nonceAfter - nonceBefore} (both must be +${INSTANCE_MINTS})`,
    ],
  ];
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
  await Promise.all(instances.map((s) => s.stop()));
  return { results, reorgLines: instances.reduce((sum, s) => sum + countReorgLines(s.output()), 0) };
}

/**
 * The bursts' HTTP client: node:http with kept-alive connections, so that the load generator,
 * which shares two cores with the service, the node and the proxy, costs little beside them.
 * With fetch (undici) this process spent about 3 times the CPU per burst, and on a busy machine
 * a fresh service saw a burst's 200 requests arrive over nearly 4 s instead of 0.8 s.
 */
const burstClient = {
  agent: new http.Agent({ keepAlive: true }),
  post(baseUrl: string, path: string, json: unknown): Promise<ApiResponse> {
    const payload = Buffer.from(JSON.stringify(json));
    return new Promise((resolve, reject) => {
      const request = http.request(
        `${baseUrl}${path}`,
        {
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", "content-length": payload.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let body = {};
            try {
              body = JSON.parse(text) as ApiResponse["body"];
            } catch {
              // not JSON: kept as text
            }
            resolve({ status: res.statusCode ?? 0, headers: new Headers(), text, body });
          });
        },
      );
      request.on("error", reject);
      request.end(payload);
    });
  },
};
onCleanup(async () => burstClient.agent.destroy());

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

/** The service's log lines that report a reorg. */
function countReorgLines(output: string): number {
  return output.split("\n").filter((line) => /reorg/i.test(line)).length;
}

/** Resolves just after the chain's head moves; throws if it has not within 30 s (blocks come every BLOCK_MS). */
async function nextBlock(control: ChainControl): Promise<void> {
  const start = await control.blockNumber();
  const deadline = Date.now() + 30_000;
  while ((await control.blockNumber()) === start) {
    if (Date.now() > deadline) throw new Error(`the head stayed at block ${start} for 30 s (interval mining is off?)`);
    await sleep(10);
  }
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

/** The blocks holding a burst's transactions, and how many in each. */
function blocksOf(numbers: number[]): { blocks: number[]; perBlock: Record<number, number> } {
  const perBlock: Record<number, number> = {};
  for (const n of numbers) perBlock[n] = (perBlock[n] ?? 0) + 1;
  return {
    blocks: Object.keys(perBlock)
      .map(Number)
      .sort((a, b) => a - b),
    perBlock,
  };
}
/** Blocks from the burst's first to its last, both counted. */
const span = (b: Burst) => (b.blocks.length === 0 ? 0 : b.blocks[b.blocks.length - 1] - b.blocks[0] + 1);
/** Blocks between the head at the burst's start and the first block holding one of its transactions. */
const firstDelay = (b: Burst) => (b.blocks.length === 0 ? "-" : String(b.blocks[0] - b.startHead));

function printBurst(name: string, b: Burst): void {
  const statuses = Object.keys(b.statuses).length > 0 ? ` answers ${JSON.stringify(b.statuses)},` : "";
  log(
    `  ${name}: wall ${fmt(b.wallMs)},${statuses} errors ${b.errors}, blocks [${b.blocks.map((n) => `${n}×${b.perBlock[n]}`).join(", ")}] from head ${b.startHead}, nonce +${b.nonceDelta}; CPU s: ${cpuText(b.cpu)}`,
  );
  for (const s of b.samples) log(`    sample: ${s}`);
}

const cpuText = (c: CpuFigures) =>
  [
    c.service === undefined ? "" : `service ${c.service.toFixed(2)}`,
    `node ${c.node?.toFixed(2) ?? "n/a"}`,
    `bench ${c.bench.toFixed(2)}`,
  ]
    .filter(Boolean)
    .join(", ");
const machineLoad = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
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
