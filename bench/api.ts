/**
 * API throughput against direct JSON-RPC on the same `hardhat node`, in one run:
 *  (a) POST /nft/tokenURI vs the same eth_call sent straight to the node, both by autocannon;
 *  (b) POST /nft/mint from 16 concurrent clients on one key vs raw ethers sendTransaction of
 *      the same call (one key, ethers' NonceManager, sends chained so nonces reach the node in order).
 * Run: npm run bench:api   (BENCH_SECONDS, BENCH_MINTS to change the load)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { JsonRpcProvider, NonceManager, Wallet } from "ethers";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { startHardhatNode, startServiceProcess } from "./processes";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const MINTS = Number(process.env.BENCH_MINTS ?? 320);
const CONCURRENCY = 16;
const KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80", // #0 deployer
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d", // #1 API minter
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a", // #2 raw minter
];

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function cannon(opts: autocannon.Options): Promise<Figures> {
  const result = await autocannon({ ...opts, method: "POST", headers: { "content-type": "application/json" } });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function main(): Promise<void> {
  const node = await startHardhatNode();
  const provider = new JsonRpcProvider(node.rpcUrl, undefined, { cacheTimeout: -1 });
  const deployer = new NonceManager(new Wallet(KEYS[0], provider));
  const deployed = await (await deployer.sendTransaction(await deployTransaction(DEFAULT_COLLECTION))).wait();
  const contractAddress = deployed!.contractAddress!;
  const iface = collectionInterface();
  await (
    await deployer.sendTransaction({
      to: contractAddress,
      data: iface.encodeFunctionData("mintForFree", [1, await deployer.getAddress()]),
    })
  ).wait();

  console.error(`node at ${node.rpcUrl}, collection at ${contractAddress}; starting the service`);
  const service = await startServiceProcess({
    RPC_URL: node.rpcUrl,
    API_KEY: "bench-api-key-0123456789abcdef",
    DATA_DIR: mkdtempSync(path.join(tmpdir(), "nft-bench-")),
    LOG_LEVEL: "info",
  });

  console.error(`service up at ${service.url}; measuring reads for ${SECONDS}s each`);
  // (a) reads
  const callBody = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "eth_call",
    params: [{ to: contractAddress, data: iface.encodeFunctionData("tokenURI", [1]) }, "latest"],
  });
  const apiBody = JSON.stringify({ privateKey: KEYS[1], contractAddress, tokenId: "1" });
  await cannon({ url: `${service.url}/nft/tokenURI`, body: apiBody, duration: 1, connections: CONCURRENCY }); // warm-up
  const directRead = await cannon({ url: node.rpcUrl, body: callBody, duration: SECONDS, connections: CONCURRENCY });
  const apiRead = await cannon({
    url: `${service.url}/nft/tokenURI`,
    body: apiBody,
    duration: SECONDS,
    connections: CONCURRENCY,
  });

  console.error(`reads done; measuring ${MINTS} mints each way`);
  // (b) writes: the same mint(1) with its price, MINTS times, CONCURRENCY at a time
  const mintBody = JSON.stringify({ privateKey: KEYS[1], contractAddress, mintAmount: "1" });
  const apiMint = await cannon({
    url: `${service.url}/nft/mint`,
    body: mintBody,
    amount: MINTS,
    connections: CONCURRENCY,
  });
  const rawMint = await rawEthersMints(provider, contractAddress);

  const rows = {
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
  const readOk = readRatio >= 0.8;
  const writeOk = writeRatio >= 0.7 && apiMint.errors === 0;
  console.log(`${readOk ? "PASS" : "FAIL"}: tokenURI API/direct = ${readRatio.toFixed(2)}x (target >= 0.8x)`);
  console.log(
    `${writeOk ? "PASS" : "FAIL"}: mint API/raw ethers = ${writeRatio.toFixed(2)}x with ${apiMint.errors} errors (target >= 0.7x, 0 errors)`,
  );
  service.child.kill("SIGTERM");
  node.child.kill("SIGTERM");
  process.exitCode = readOk && writeOk ? 0 : 1;
}

/** MINTS mint(1) calls from one key, CONCURRENCY in flight, with plain ethers. */
async function rawEthersMints(provider: JsonRpcProvider, contractAddress: string): Promise<Figures> {
  const signer = new NonceManager(new Wallet(KEYS[2], provider));
  const iface = collectionInterface();
  const tx = {
    to: contractAddress,
    data: iface.encodeFunctionData("mint", [1]),
    value: DEFAULT_COLLECTION.cost,
  };
  // The node refuses a nonce ahead of the next one, so sends are chained; waiting is concurrent.
  let chain: Promise<unknown> = Promise.resolve();
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next++ < MINTS) {
      const t0 = performance.now();
      try {
        const send = chain.then(() => signer.sendTransaction(tx));
        chain = send.catch(() => signer.reset());
        await (await send).wait();
        latencies.push(performance.now() - t0);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
  return { rps: latencies.length / seconds, p50: pct(50), p99: pct(99), errors };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
