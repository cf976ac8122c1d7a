/**
 * API throughput against direct JSON-RPC on the same `hardhat node`, in one run:
 *  (a) POST /nft/tokenURI vs the same eth_call sent straight to the node, both by autocannon
 *      with the same number of connections;
 *  (b) POST /nft/mint from 16 concurrent clients on one key vs raw ethers sendTransaction of the
 *      same call from 16 concurrent workers on one key, both driven by the same loop here
 *      (autocannon ends a fixed-count run on a whole second, which skews a short write run). The baseline does what a careful ethers
 *      user must: populate (estimate, fees) concurrently, hand out nonces and broadcast in order
 *      (the node refuses a nonce ahead of the next one), then wait for the receipt concurrently.
 * Each side runs BENCH_ROUNDS times, alternating with the other, and the median round is shown.
 * Run: npm run bench:api   (BENCH_SECONDS, BENCH_MINTS, BENCH_ROUNDS change the load)
 */
import autocannon from "autocannon";
import { JsonRpcProvider, Network, NonceManager, Wallet, type TransactionRequest } from "ethers";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { ChainNode, DEV_KEYS, ServiceProcess } from "../test/api/harness";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const MINTS = Number(process.env.BENCH_MINTS ?? 200);
const CONCURRENCY = 16;
/** Each side is measured this many times, alternating, and the median round reported. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
// #0 deploys, #1 mints through the API, #2 mints with raw ethers.
const [DEPLOYER_KEY, API_MINTER_KEY, RAW_MINTER_KEY] = DEV_KEYS;

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

async function main(): Promise<void> {
  const node = await ChainNode.start();
  const provider = new JsonRpcProvider(node.rpcUrl, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    batchMaxCount: 1,
  });
  const deployer = new NonceManager(new Wallet(DEPLOYER_KEY, provider));
  const deployed = await (await deployer.sendTransaction(await deployTransaction(DEFAULT_COLLECTION))).wait();
  const contractAddress = deployed!.contractAddress!;
  const iface = collectionInterface();
  const mintTo = iface.encodeFunctionData("mintForFree", [1, await deployer.getAddress()]);
  await (await deployer.sendTransaction({ to: contractAddress, data: mintTo })).wait();

  console.error(`node at ${node.rpcUrl}, collection at ${contractAddress}; starting the service`);
  // Logs at info, written where a deployment's log file would take them, not into this process.
  const service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, stdout: "ignore" });

  // (a) reads
  const callBody = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_call",
    params: [{ to: contractAddress, data: iface.encodeFunctionData("tokenURI", [1]) }, "latest"],
  });
  const apiBody = JSON.stringify({ privateKey: API_MINTER_KEY, contractAddress, tokenId: "1" });
  const tokenUriUrl = `${service.url}/nft/tokenURI`;
  console.error(`measuring reads: ${ROUNDS} rounds of ${SECONDS}s each way`);
  await cannon({ url: tokenUriUrl, body: apiBody, duration: 3, connections: CONCURRENCY }); // JIT warm-up
  const directReads: Figures[] = [];
  const apiReads: Figures[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    directReads.push(await cannon({ url: node.rpcUrl, body: callBody, duration: SECONDS, connections: CONCURRENCY }));
    apiReads.push(await cannon({ url: tokenUriUrl, body: apiBody, duration: SECONDS, connections: CONCURRENCY }));
  }

  // (b) writes: the same paid mint(1), MINTS times each way, CONCURRENCY at a time
  console.error(`measuring mints: ${ROUNDS} rounds of ${MINTS} each way`);
  const mintBody = JSON.stringify({ privateKey: API_MINTER_KEY, contractAddress, mintAmount: "1" });
  const mintTx = { to: contractAddress, data: iface.encodeFunctionData("mint", [1]), value: DEFAULT_COLLECTION.cost };
  const rawMints: Figures[] = [];
  const apiMintRounds: Figures[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    rawMints.push(await rawEthersMints(provider, mintTx));
    apiMintRounds.push(await apiMints(`${service.url}/nft/mint`, mintBody));
  }
  const [directRead, apiRead, rawMint, apiMint] = [directReads, apiReads, rawMints, apiMintRounds].map(medianRound);

  const rows: Record<string, Figures> = {
    "tokenURI direct eth_call": directRead,
    "tokenURI via API": apiRead,
    "mint raw ethers": rawMint,
    "mint via API": apiMint,
  };
  console.table(
    Object.fromEntries(
      Object.entries(rows).map(([name, f]) => [
        name,
        { "req/s": f.rps.toFixed(1), "p50 ms": f.p50.toFixed(1), "p99 ms": f.p99.toFixed(1), errors: f.errors },
      ]),
    ),
  );
  const readRatio = apiRead.rps / directRead.rps;
  const writeRatio = apiMint.rps / rawMint.rps;
  const readOk = readRatio >= 0.8 && apiRead.errors === 0;
  const writeOk = writeRatio >= 0.7 && apiMint.errors === 0;
  console.log(`${readOk ? "PASS" : "FAIL"}: tokenURI API/direct = ${readRatio.toFixed(2)}x (target >= 0.8x)`);
  console.log(
    `${writeOk ? "PASS" : "FAIL"}: mint API/raw ethers = ${writeRatio.toFixed(2)}x, ${apiMint.errors} API errors (target >= 0.7x, 0 errors)`,
  );
  await service.stop();
  await node.stop();
  process.exitCode = readOk && writeOk ? 0 : 1;
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
      } catch {
        errors++;
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
    await res.text();
    if (res.status !== 200) throw new Error(`mint answered ${res.status}`);
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
