/**
 * API throughput against direct JSON-RPC, in one run, in both runtime shapes:
 *  (a) separate node: POST /nft/tokenURI of a service on RPC_URL vs the same eth_call sent straight
 *      to that `hardhat node`, both by autocannon with the same number of connections (10, then 16).
 *      Both sides read a rotating set of READ_TOKENS minted token ids, each request the next id, so
 *      that no two requests in flight read the same token: the service merges identical eth_calls
 *      in flight, which the direct side does not, and a single token measured the merging rather
 *      than the raw path. Both sides reach the node through an RpcProxy, which counts the JSON-RPC
 *      calls each side's requests cost (the direct side's: 1). The figure for one token for every
 *      request (16 connections) is printed too, labelled "merged";
 *  (a') embedded: POST /nft/tokenURI of `npm start` with no RPC_URL vs the same eth_call sent to
 *      the JSON-RPC port (CHAIN_PORT) that this very service process serves for its in-process
 *      chain, the same rotating token ids. Both sides then run in the one service process and pay
 *      one HTTP exchange on the same event loop (the API's, or the chain port's) around the same EVM
 *      call: the ratio is what the API adds over reaching the embedded chain directly;
 *  (b) POST /nft/mint from 16 concurrent clients on one key vs the lean raw ethers client of
 *      bench/blocktime.ts sending the same call from 16 concurrent workers on one key (fees and
 *      the pending nonce read once and gas estimated once, in the timed window; nonces handed out
 *      in order, each mint signed at once and broadcast in nonce order, as an automining node
 *      refuses a nonce ahead of the next; then its receipt awaited), both driven by the same loop
 *      here (autocannon ends a fixed-count run on a whole second, which skews a short write run),
 *      on the separate node behind the same proxy, and on the embedded chain (the raw client on
 *      the service's CHAIN_PORT).
 * Each side runs BENCH_ROUNDS times, alternating with the other, and the median round is shown.
 * Run: npm run bench:api   (BENCH_SECONDS, BENCH_MINTS, BENCH_ROUNDS change the load)
 */
import { JsonRpcProvider, Network, Wallet, type TransactionRequest } from "ethers";
import { collectionInterface, DEFAULT_COLLECTION } from "../server/chain/collection";
import { ChainNode, DEV_KEYS, ServiceProcess } from "../test/api/harness";
import { RpcProxy } from "../test/support/rpc-proxy";
import { apiChecks, verdict, type Ratio } from "./checks";
import { envSized, sized } from "./smoke";
import { cannon, deployWithTokens, machineLoad, medianRound, rotating, type Figures } from "./load";

const SECONDS = envSized("BENCH_SECONDS", 5, 1);
const MINTS = envSized("BENCH_MINTS", 200, 10);
const CONCURRENCY = 16;
/** Read loads, in connections: each is measured both ways. */
const READ_CONNECTIONS = sized([10, 16], [10]);
/** Token ids the reads rotate over (minted 10 a transaction, the collection's cap per transaction). */
const READ_TOKENS = sized(250, 20);
/** Each side is measured this many times, alternating, and the median round reported. */
const ROUNDS = envSized("BENCH_ROUNDS", 3, 1);
// #0 deploys on the separate node, #1 mints through the API, #2 mints with raw ethers, #3 deploys on the embedded chain.
const [DEPLOYER_KEY, API_MINTER_KEY, RAW_MINTER_KEY, EMBEDDED_DEPLOYER_KEY] = DEV_KEYS;
// Targets: API reads at >= 0.8x direct eth_call, API mints at >= 1.0x raw ethers, both shapes (API_TARGETS in ./checks).

async function main(): Promise<void> {
  console.log(`machine: ${machineLoad()}`);
  const separate = await separateNode();
  const embedded = await embeddedChain();

  const rows: Record<string, Figures> = {};
  for (const [shape, reads] of [
    ["separate node", separate.reads],
    ["embedded", embedded.reads],
  ] as const) {
    const direct = `direct eth_call${shape === "embedded" ? " (CHAIN_PORT)" : ""}`;
    for (const [connections, r] of reads.rotating) {
      rows[`${shape}, ${connections} conn: tokenURI of ${READ_TOKENS} ids, ${direct}`] = r.directRead;
      rows[`${shape}, ${connections} conn: tokenURI of ${READ_TOKENS} ids, via API`] = r.apiRead;
    }
    rows[`${shape}, ${reads.merged.connections} conn: tokenURI(1) every time, ${direct}`] = reads.merged.directRead;
    rows[`${shape}, ${reads.merged.connections} conn: tokenURI(1) every time, via API (merged)`] = reads.merged.apiRead;
  }
  rows["separate node: mint lean raw ethers"] = separate.rawMint;
  rows["separate node: mint via API"] = separate.apiMint;
  rows["embedded: mint lean raw ethers (CHAIN_PORT)"] = embedded.rawMint;
  rows["embedded: mint via API"] = embedded.apiMint;
  console.table(
    Object.fromEntries(
      Object.entries(rows).map(([name, f]) => [
        name,
        {
          "req/s": f.rps.toFixed(1),
          "p50 ms": f.p50.toFixed(1),
          "p99 ms": f.p99.toFixed(1),
          errors: f.errors,
          "calls/req": f.calls?.toFixed(2) ?? "-",
        },
      ]),
    ),
  );
  console.log(
    "calls/req: JSON-RPC calls the node received over a run, counted at the proxy, per request answered (the service's own polling included)",
  );
  const readRatio = (name: string, r: Record<"directRead" | "apiRead", Figures>): Ratio => ({
    name,
    ratio: r.apiRead.rps / r.directRead.rps,
    errors: r.apiRead.errors,
  });
  const checks = apiChecks({
    reads: [
      ...[...separate.reads.rotating].map(([connections, r]) =>
        readRatio(`tokenURI of ${READ_TOKENS} ids API/direct eth_call, separate node, ${connections} connections`, r),
      ),
      ...[...embedded.reads.rotating].map(([connections, r]) =>
        readRatio(`tokenURI of ${READ_TOKENS} ids API/direct eth_call, embedded chain, ${connections} connections`, r),
      ),
    ],
    mints: [
      { name: "separate node", ratio: separate.apiMint.rps / separate.rawMint.rps, errors: separate.apiMint.errors },
      { name: "embedded chain", ratio: embedded.apiMint.rps / embedded.rawMint.rps, errors: embedded.apiMint.errors },
    ],
  });
  for (const [shape, { merged }] of [
    ["separate node", separate.reads],
    ["embedded chain", embedded.reads],
  ] as const) {
    const calls = merged.apiRead.calls === undefined ? "" : `, ${merged.apiRead.calls.toFixed(2)} calls/request`;
    console.log(
      `report: tokenURI(1) every time (merged: identical calls in flight are one) API/direct eth_call, ${shape}, ` +
        `${merged.connections} connections = ${(merged.apiRead.rps / merged.directRead.rps).toFixed(2)}x${calls}`,
    );
  }
  const exitCode = verdict(checks);
  console.log(`machine at the end: ${machineLoad()}`);
  process.exitCode = exitCode;
}

type Pair = Record<"directRead" | "apiRead", Figures>;
/** Reads at each of READ_CONNECTIONS over the rotating ids; and of one token at the most connections. */
interface Reads {
  rotating: Map<number, Pair>;
  merged: Pair & { connections: number };
}

/** A service on RPC_URL and a separate `hardhat node`, both sides behind one proxy: reads both ways, then mints both ways. */
async function separateNode(): Promise<{ reads: Reads; rawMint: Figures; apiMint: Figures }> {
  const node = await ChainNode.start();
  const proxy = await RpcProxy.start(node.rpcUrl);
  const provider = new JsonRpcProvider(proxy.url, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    batchMaxCount: 1,
  });
  const contractAddress = await deployWithTokens(provider, DEPLOYER_KEY, READ_TOKENS);

  console.error(`node at ${node.rpcUrl} behind ${proxy.url}, collection at ${contractAddress}; starting the service`);
  // Logs at info, written where a deployment's log file would take them, not into this process.
  const service = await ServiceProcess.start({ rpcUrl: proxy.url, stdout: "ignore" });
  const reads = await measureReads(`${service.url}/nft/tokenURI`, proxy.url, contractAddress, proxy);

  // (b) writes
  const mints = await measureMints(`${service.url}/nft/mint`, proxy.url, contractAddress, proxy);
  provider.destroy();
  await service.stop();
  await proxy.close();
  await node.stop();
  return { reads, ...mints };
}

/** (b): the same paid mint(1), MINTS times each way, CONCURRENCY at a time, ROUNDS rounds alternating. */
async function measureMints(
  mintUrl: string,
  rpcUrl: string,
  contractAddress: string,
  proxy?: RpcProxy,
): Promise<{ rawMint: Figures; apiMint: Figures }> {
  console.error(`measuring mints: ${ROUNDS} rounds of ${MINTS} each way`);
  const iface = collectionInterface();
  const mintBody = JSON.stringify({ privateKey: API_MINTER_KEY, contractAddress, mintAmount: "1" });
  const mintTx = { to: contractAddress, data: iface.encodeFunctionData("mint", [1]), value: DEFAULT_COLLECTION.cost };
  const rawMints: Figures[] = [];
  const apiMintRounds: Figures[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    rawMints.push(await leanRawMints(rpcUrl, mintTx, proxy));
    apiMintRounds.push(await apiMints(mintUrl, mintBody, proxy));
  }
  return { rawMint: medianRound(rawMints), apiMint: medianRound(apiMintRounds) };
}

/** `npm start` with no RPC_URL: the API and the chain's JSON-RPC port are served by the one process. */
async function embeddedChain(): Promise<{ reads: Reads; rawMint: Figures; apiMint: Figures }> {
  console.error("starting the service on its embedded chain");
  const service = await ServiceProcess.start({ stdout: "ignore" });
  const chainUrl = `http://127.0.0.1:${service.chainPort}`;
  const provider = new JsonRpcProvider(chainUrl, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    batchMaxCount: 1,
  });
  // Another account than the service's own deployer (#0), whose deployment may still be under way.
  const contractAddress = await deployWithTokens(provider, EMBEDDED_DEPLOYER_KEY, READ_TOKENS);
  const reads = await measureReads(`${service.url}/nft/tokenURI`, chainUrl, contractAddress);
  const mints = await measureMints(`${service.url}/nft/mint`, chainUrl, contractAddress);
  provider.destroy();
  await service.stop();
  return { reads, ...mints };
}

/**
 * POST /nft/tokenURI against the same eth_call straight to `rpcUrl`, over the rotating token ids at
 * each of READ_CONNECTIONS, then of token 1 alone at the most connections; ROUNDS times each way,
 * alternating.
 */
async function measureReads(
  tokenUriUrl: string,
  rpcUrl: string,
  contractAddress: string,
  proxy?: RpcProxy,
): Promise<Reads> {
  const iface = collectionInterface();
  const ids = Array.from({ length: READ_TOKENS }, (_, i) => i + 1);
  const callBody = (tokenId: number) =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_call",
      params: [{ to: contractAddress, data: iface.encodeFunctionData("tokenURI", [tokenId]) }, "latest"],
    });
  const apiBody = (tokenId: number) =>
    JSON.stringify({ privateKey: API_MINTER_KEY, contractAddress, tokenId: String(tokenId) });
  const callBodies = ids.map(callBody);
  const apiBodies = ids.map(apiBody);
  console.error(`measuring reads: ${ROUNDS} rounds of ${SECONDS}s each way`);
  // JIT warm-up of both sides (smoke mode: a second each, the path once through)
  await cannon({ url: rpcUrl, requests: rotating(callBodies), duration: sized(2, 1), connections: CONCURRENCY });
  await cannon({ url: tokenUriUrl, requests: rotating(apiBodies), duration: sized(3, 1), connections: CONCURRENCY });
  const pair = async (connections: number, direct: string[], api: string[]): Promise<Pair> => {
    const directReads: Figures[] = [];
    const apiReads: Figures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      directReads.push(
        await cannon({ url: rpcUrl, requests: rotating(direct), duration: SECONDS, connections }, proxy),
      );
      apiReads.push(await cannon({ url: tokenUriUrl, requests: rotating(api), duration: SECONDS, connections }, proxy));
    }
    return { directRead: medianRound(directReads), apiRead: medianRound(apiReads) };
  };
  const rotatingReads = new Map<number, Pair>();
  for (const connections of READ_CONNECTIONS)
    rotatingReads.set(connections, await pair(connections, callBodies, apiBodies));
  const most = Math.max(...READ_CONNECTIONS);
  const merged = await pair(most, [callBody(1)], [apiBody(1)]);
  return { rotating: rotatingReads, merged: { ...merged, connections: most } };
}

/**
 * Runs `task` MINTS times, CONCURRENCY at a time, timing each, after `prepare` (inside the timed
 * window); a task that throws counts as an error. With a proxy, the calls it counted per mint.
 */
async function mintLoad(
  task: () => Promise<void>,
  proxy: RpcProxy | undefined,
  prepare: () => Promise<void> = async () => {},
): Promise<Figures> {
  const latencies: number[] = [];
  let errors = 0;
  let started = 0;
  proxy?.resetCounts();
  const t0 = performance.now();
  await prepare();
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
  return {
    rps: latencies.length / seconds,
    p50: percentile(50),
    p99: percentile(99),
    errors,
    calls: proxy ? proxy.total() / MINTS : undefined,
  };
}

function apiMints(url: string, body: string, proxy?: RpcProxy): Promise<Figures> {
  return mintLoad(async () => {
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`mint answered ${res.status} ${text.slice(0, 200)}`);
  }, proxy);
}

/**
 * bench/blocktime.ts's lean raw client, a new provider each round as a new script run: fees and the
 * pending nonce once and gas estimated once (in the timed window), then for each mint the next
 * nonce, signed at once, broadcast in nonce order, its receipt awaited.
 */
async function leanRawMints(
  rpcUrl: string,
  tx: Required<Pick<TransactionRequest, "to" | "data" | "value">>,
  proxy?: RpcProxy,
) {
  const provider = new JsonRpcProvider(rpcUrl, Network.from(31337), { staticNetwork: true, cacheTimeout: -1 });
  const wallet = new Wallet(RAW_MINTER_KEY, provider);
  let fees: { maxFeePerGas: bigint | null; maxPriorityFeePerGas: bigint | null } = {
    maxFeePerGas: null,
    maxPriorityFeePerGas: null,
  };
  let nonce = 0;
  let gasLimit = 0n;
  let broadcastQueue: Promise<unknown> = Promise.resolve();
  try {
    return await mintLoad(
      async () => {
        const signing = wallet.signTransaction({
          ...tx,
          type: 2,
          chainId: 31337,
          nonce: nonce++,
          gasLimit,
          maxFeePerGas: fees.maxFeePerGas,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        });
        const sent = broadcastQueue.then(async () => provider.broadcastTransaction(await signing));
        broadcastQueue = sent.catch(() => {});
        await provider.waitForTransaction((await sent).hash);
      },
      proxy,
      async () => {
        [fees, nonce, gasLimit] = await Promise.all([
          provider.getFeeData(),
          provider.getTransactionCount(wallet.address, "pending"),
          provider.estimateGas({ ...tx, from: wallet.address }),
        ]);
      },
    );
  } finally {
    provider.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
