/**
 * API throughput against direct JSON-RPC, in one run, in both runtime shapes:
 *  (a) separate node: POST /nft/tokenURI of a service on RPC_URL vs the same eth_call sent straight
 *      to that `hardhat node`, both by autocannon with the same number of connections (10, then 16);
 *  (a') embedded: POST /nft/tokenURI of `npm start` with no RPC_URL vs the same eth_call sent to
 *      the JSON-RPC port (CHAIN_PORT) that this very service process serves for its in-process
 *      chain. Both sides then run in the one service process and pay one HTTP exchange on the same
 *      event loop (the API's, or the chain port's) around the same EVM call: the ratio is what the
 *      API adds over reaching the embedded chain directly;
 *  (b) POST /nft/mint from 16 concurrent clients on one key vs raw ethers sendTransaction of the
 *      same call from 16 concurrent workers on one key, both driven by the same loop here
 *      (autocannon ends a fixed-count run on a whole second, which skews a short write run), on the
 *      separate node. The baseline does what a careful ethers user must: populate (estimate, fees) concurrently, hand out nonces and broadcast in order
 *      (the node refuses a nonce ahead of the next one), then wait for the receipt concurrently.
 * Each side runs BENCH_ROUNDS times, alternating with the other, and the median round is shown.
 * Run: npm run bench:api   (BENCH_SECONDS, BENCH_MINTS, BENCH_ROUNDS change the load)
 */
import { loadavg } from "node:os";
import autocannon from "autocannon";
import { JsonRpcProvider, Network, NonceManager, Wallet, type TransactionRequest } from "ethers";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { ChainNode, DEV_KEYS, ServiceProcess } from "../test/api/harness";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const MINTS = Number(process.env.BENCH_MINTS ?? 200);
const CONCURRENCY = 16;
/** Read loads, in connections: each is measured both ways. */
const READ_CONNECTIONS = [10, 16];
/** Each side is measured this many times, alternating, and the median round reported. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// #0 deploys on the separate node, #1 mints through the API, #2 mints with raw ethers, #3 deploys on the embedded chain.
const [DEPLOYER_KEY, API_MINTER_KEY, RAW_MINTER_KEY, EMBEDDED_DEPLOYER_KEY] = DEV_KEYS;
/** Targets: API reads at >= 0.8x direct eth_call (both shapes), API mints at >= 0.7x raw ethers. */
const READ_TARGET = 0.8;
const WRITE_TARGET = 0.7;

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function cannon(opts: autocannon.Options): Promise<Figures> {
  const started = performance.now();
  const result = await autocannon({ ...opts, method: "POST", headers: { "content-type": "application/json" } });
  const seconds = (performance.now() - started) / 1000; // autocannon's own duration is whole seconds
  return {
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

const machineLoad = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;

async function main(): Promise<void> {
  console.log(`machine: ${machineLoad()}`);
  const separate = await separateNode();
  const embedded = await embeddedChain();

  const rows: Record<string, Figures> = {};
  for (const [shape, reads] of [
    ["separate node", separate.reads],
    ["embedded", embedded.reads],
  ] as const) {
    for (const [connections, { directRead, apiRead }] of reads) {
      rows[`${shape}, ${connections} conn: tokenURI direct eth_call${shape === "embedded" ? " (CHAIN_PORT)" : ""}`] =
        directRead;
      rows[`${shape}, ${connections} conn: tokenURI via API`] = apiRead;
    }
  }
  rows["separate node: mint raw ethers"] = separate.rawMint;
  rows["separate node: mint via API"] = separate.apiMint;
  console.table(
    Object.fromEntries(
      Object.entries(rows).map(([name, f]) => [
        name,
        { "req/s": f.rps.toFixed(1), "p50 ms": f.p50.toFixed(1), "p99 ms": f.p99.toFixed(1), errors: f.errors },
      ]),
    ),
  );
  const checks = [
    ...[...separate.reads].map(([connections, r]) =>
      readCheck(`tokenURI API/direct eth_call, separate node, ${connections} connections`, r.apiRead, r.directRead),
    ),
    ...[...embedded.reads].map(([connections, r]) =>
      readCheck(`tokenURI API/direct eth_call, embedded chain, ${connections} connections`, r.apiRead, r.directRead),
    ),
    (() => {
      const ratio = separate.apiMint.rps / separate.rawMint.rps;
      const ok = ratio >= WRITE_TARGET && separate.apiMint.errors === 0;
      console.log(
        `${ok ? "PASS" : "FAIL"}: mint API/raw ethers = ${ratio.toFixed(2)}x, ${separate.apiMint.errors} API errors (target >= ${WRITE_TARGET}x, 0 errors)`,
      );
      return ok;
    })(),
  ];
  console.log(`machine at the end: ${machineLoad()}`);
  process.exitCode = checks.every(Boolean) ? 0 : 1;
}

function readCheck(name: string, api: Figures, direct: Figures): boolean {
  const ratio = api.rps / direct.rps;
  const ok = ratio >= READ_TARGET && api.errors === 0;
  console.log(`${ok ? "PASS" : "FAIL"}: ${name} = ${ratio.toFixed(2)}x (target >= ${READ_TARGET}x)`);
  return ok;
}

/** A service on RPC_URL and a separate `hardhat node`: reads both ways, then mints both ways. */
type Reads = Map<number, Record<"directRead" | "apiRead", Figures>>;

async function separateNode(): Promise<{ reads: Reads; rawMint: Figures; apiMint: Figures }> {
  const node = await ChainNode.start();
  const provider = new JsonRpcProvider(node.rpcUrl, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    batchMaxCount: 1,
  });
  const contractAddress = await deployWithToken(provider, DEPLOYER_KEY);

  console.error(`node at ${node.rpcUrl}, collection at ${contractAddress}; starting the service`);
  // Logs at info, written where a deployment's log file would take them, not into this process.
  const service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, stdout: "ignore" });
  const reads = await measureReads(`${service.url}/nft/tokenURI`, node.rpcUrl, contractAddress);

  // (b) writes: the same paid mint(1), MINTS times each way, CONCURRENCY at a time
  console.error(`measuring mints: ${ROUNDS} rounds of ${MINTS} each way`);
  const iface = collectionInterface();
  const mintBody = JSON.stringify({ privateKey: API_MINTER_KEY, contractAddress, mintAmount: "1" });
  const mintTx = { to: contractAddress, data: iface.encodeFunctionData("mint", [1]), value: DEFAULT_COLLECTION.cost };
  const rawMints: Figures[] = [];
  const apiMintRounds: Figures[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    rawMints.push(await rawEthersMints(provider, mintTx));
    apiMintRounds.push(await apiMints(`${service.url}/nft/mint`, mintBody));
  }
  provider.destroy();
  await service.stop();
  await node.stop();
  return { reads, rawMint: medianRound(rawMints), apiMint: medianRound(apiMintRounds) };
}

/** `npm start` with no RPC_URL: the API and the chain's JSON-RPC port are served by the one process. */
async function embeddedChain(): Promise<{ reads: Reads }> {
  console.error("starting the service on its embedded chain");
  const service = await ServiceProcess.start({ stdout: "ignore" });
  const chainUrl = `http://127.0.0.1:${service.chainPort}`;
  const provider = new JsonRpcProvider(chainUrl, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    batchMaxCount: 1,
  });
  // Another account than the service's own deployer (#0), whose deployment may still be under way.
  const contractAddress = await deployWithToken(provider, EMBEDDED_DEPLOYER_KEY);
  const reads = await measureReads(`${service.url}/nft/tokenURI`, chainUrl, contractAddress);
  provider.destroy();
  await service.stop();
  return { reads };
}

/** Deploys the reference collection from `key` and mints token 1, so that tokenURI(1) answers. */
async function deployWithToken(provider: JsonRpcProvider, key: string): Promise<string> {
  const deployer = new NonceManager(new Wallet(key, provider));
  const deployed = await (await deployer.sendTransaction(await deployTransaction(DEFAULT_COLLECTION))).wait();
  const contractAddress = deployed!.contractAddress!;
  const mintTo = collectionInterface().encodeFunctionData("mintForFree", [1, await deployer.getAddress()]);
  await (await deployer.sendTransaction({ to: contractAddress, data: mintTo })).wait();
  return contractAddress;
}

/**
 * POST /nft/tokenURI against the same eth_call straight to `rpcUrl`, at each of READ_CONNECTIONS,
 * ROUNDS times each way, alternating.
 */
async function measureReads(tokenUriUrl: string, rpcUrl: string, contractAddress: string): Promise<Reads> {
  const callBody = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_call",
    params: [{ to: contractAddress, data: collectionInterface().encodeFunctionData("tokenURI", [1]) }, "latest"],
  });
  const apiBody = JSON.stringify({ privateKey: API_MINTER_KEY, contractAddress, tokenId: "1" });
  console.error(`measuring reads: ${ROUNDS} rounds of ${SECONDS}s each way`);
  // JIT warm-up of both sides
  await cannon({ url: rpcUrl, body: callBody, duration: 2, connections: CONCURRENCY });
  await cannon({ url: tokenUriUrl, body: apiBody, duration: 3, connections: CONCURRENCY });
  const reads: Reads = new Map();
  for (const connections of READ_CONNECTIONS) {
    const directReads: Figures[] = [];
    const apiReads: Figures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      directReads.push(await cannon({ url: rpcUrl, body: callBody, duration: SECONDS, connections }));
      apiReads.push(await cannon({ url: tokenUriUrl, body: apiBody, duration: SECONDS, connections }));
    }
    reads.set(connections, { directRead: medianRound(directReads), apiRead: medianRound(apiReads) });
  }
  return reads;
}

function medianRound(rounds: Figures[]): Figures {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return { ...sorted[Math.floor(sorted.length / 2)], errors: rounds.reduce((sum, r) => sum + r.errors, 0) };
}

/** Runs `task` MINTS times, CONCURRENCY at a time, timing each; a task that throws counts as an error. */
async function mintLoad(task: () => Promise<void>): Promise<Figures> {
  const latencies: number[] = [];
  let errors = 0;
  let started = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (started++ < MINTS) {
      const begin = performance.now();
      try {
        await task();
        latencies.push(performance.now() - begin);
      } catch (err) {
        if (errors++ === 0) console.error(`first failure: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const percentile = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return { rps: latencies.length / seconds, p50: percentile(50), p99: percentile(99), errors };
}

function apiMints(url: string, body: string): Promise<Figures> {
  return mintLoad(async () => {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`mint answered ${res.status} ${text.slice(0, 200)}`);
  });
}

function rawEthersMints(provider: JsonRpcProvider, tx: TransactionRequest): Promise<Figures> {
  const wallet = new Wallet(RAW_MINTER_KEY, provider);
  const nonces = new NonceManager(wallet);
  let broadcastQueue: Promise<unknown> = Promise.resolve();
  return mintLoad(async () => {
    const populated = await wallet.populateTransaction({ ...tx, nonce: 0 }); // nonce set below
    const send = broadcastQueue.then(async () => {
      const nonce = await nonces.getNonce("pending");
      const sent = await wallet.sendTransaction({ ...populated, nonce });
      nonces.increment();
      return sent;
    });
    broadcastQueue = send.catch(() => nonces.reset());
    await provider.waitForTransaction((await send).hash);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
