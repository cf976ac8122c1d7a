/**
 * Metadata benchmarks (issue 44, "Performance"), each a ratio against a baseline run in this process:
 *  - POST /nft/tokenURI of an ERC-4906 collection vs the same eth_call straight to the chain, over
 *    READ_TOKENS rotating token ids, 16 connections; on a separate `hardhat node` (the service behind an
 *    RpcProxy of its own that counts its eth_calls during repeat reads: target 0; the baseline behind
 *    another) and on the embedded chain (the
 *    service's own CHAIN_PORT). Target ≥ 1.5x both.
 *  - GET /metadata/… of SERVE_TOKENS revealed tokens at 32 connections vs a static file server over a
 *    directory of the same files (node:http reading each file per request, as serve-static does), in a
 *    process of its own as the service is (bench/child-static-server.ts).
 *    Target ≥ 0.8x, p99 < 50 ms.
 *  - PUT of SERVE_TOKENS documents: under 5 s; the CAR of them: under 10 s, RSS growth under 100 MB.
 * Run: npm run bench:metadata   (BENCH_SMOKE=1: tiny sizes and 1 s runs, the same code paths)
 */
import { mkdtempSync, readFile, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { JsonRpcProvider, Network, NonceManager, Wallet } from "ethers";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { ChainNode, DEV_KEYS, ServiceProcess, TEST_API_KEY } from "../test/api/harness";
import { RpcProxy } from "../test/support/rpc-proxy";
import { metadataChecks, verdict, type MetadataFigures } from "./checks";
import { startChildStaticServer } from "./child-static-server";

const SMOKE = process.env.BENCH_SMOKE === "1";
const SECONDS = SMOKE ? 1 : Number(process.env.BENCH_SECONDS ?? 5);
const READ_TOKENS = SMOKE ? 20 : 250;
const SERVE_TOKENS = SMOKE ? 100 : 10_000;
const [DEPLOYER_KEY, , , EMBEDDED_KEY] = DEV_KEYS;
const AUTH = { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" };
/** A warm-up run of `seconds`; in smoke mode a count of requests instead (each id twice), the same path in less time. */
const warmUp = (seconds: number, ids: number) => (SMOKE ? { amount: 2 * ids } : { duration: seconds });

interface Figures {
  rps: number;
  p99: number;
  errors: number;
}

async function cannon(opts: autocannon.Options): Promise<Figures> {
  const started = performance.now();
  const result = await autocannon(opts);
  const seconds = (performance.now() - started) / 1000;
  return { rps: result.requests.total / seconds, p99: result.latency.p99, errors: result.errors + result.non2xx };
}

/** Each request takes the next of `items`: no two requests in flight ask for the same token. */
function rotating(items: Array<{ path?: string; body?: string }>): autocannon.Request[] {
  let next = 0;
  return [{ setupRequest: (req) => ({ ...req, ...items[next++ % items.length] }) }];
}

const provider = (url: string) =>
  new JsonRpcProvider(url, Network.from(31337), { staticNetwork: true, batchMaxCount: 1 });

/** Deploys the reference collection from `key` and mints `tokens` to its deployer (airdrop, 2,500 a transaction). */
async function deployWithTokens(rpc: JsonRpcProvider, key: string, tokens: number): Promise<string> {
  const deployer = new NonceManager(new Wallet(key, rpc));
  const params = { ...DEFAULT_COLLECTION, cost: 0n, maxSupply: 100_000n };
  const deployed = await (await deployer.sendTransaction(await deployTransaction(params))).wait();
  const address = deployed!.contractAddress!;
  const me = await deployer.getAddress();
  for (let minted = 0; minted < tokens; minted += 2_500) {
    const data = collectionInterface().encodeFunctionData("airdrop", [[me], [Math.min(2_500, tokens - minted)]]);
    await (await deployer.sendTransaction({ to: address, data, gasLimit: 29_000_000n })).wait();
  }
  return address;
}

/** tokenURI through the API vs eth_call straight to `rpcUrl`, rotating over READ_TOKENS ids. */
async function tokenUriRatio(apiUrl: string, rpcUrl: string, address: string, proxy?: RpcProxy) {
  const iface = collectionInterface();
  const ids = Array.from({ length: READ_TOKENS }, (_, i) => i + 1);
  const direct = ids.map((id) => ({
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "eth_call",
      params: [{ to: address, data: iface.encodeFunctionData("tokenURI", [id]) }, "latest"],
    }),
  }));
  const viaApi = ids.map((id) => ({
    body: JSON.stringify({ privateKey: DEPLOYER_KEY, contractAddress: address, tokenId: String(id) }),
  }));
  const post = { method: "POST" as const, headers: { "content-type": "application/json" }, connections: 16 };
  // Warm-up: JIT both sides, every id read through the API (the first read of each goes to the chain), and
  // past the 5 s in which the cache takes it as known whether this process indexes the collection.
  await cannon({ ...post, url: rpcUrl, requests: rotating(direct), ...warmUp(1, direct.length) });
  await cannon({ ...post, url: `${apiUrl}/nft/tokenURI`, requests: rotating(viaApi), ...warmUp(6, viaApi.length) });
  const directRun = await cannon({ ...post, url: rpcUrl, requests: rotating(direct), duration: SECONDS });
  // A JSON-RPC call a tokenURI read costs is an eth_call (the block feed and the index poll beside it).
  // `proxy` sees the service's calls only: the baseline's went to `rpcUrl`.
  proxy?.resetCounts();
  const apiRun = await cannon({
    ...post,
    url: `${apiUrl}/nft/tokenURI`,
    requests: rotating(viaApi),
    duration: SECONDS,
  });
  const calls = proxy ? (proxy.calls.get("eth_call") ?? 0) : undefined;
  return { ratio: apiRun.rps / directRun.rps, directRun, apiRun, calls };
}

/** Waits until the service's index of `address` reflects `block`. */
async function indexed(apiUrl: string, address: string, block: number): Promise<void> {
  for (const deadline = Date.now() + 600_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
    const res = await fetch(`${apiUrl}/collections/${address}`).catch(() => undefined);
    const body = res?.status === 200 ? ((await res.json()) as { indexedBlock?: number }) : {};
    if ((body.indexedBlock ?? -1) >= block) return;
  }
  throw new Error(`the index of ${address} did not reach block ${block}`);
}

function rssMb(pid: number): Promise<number> {
  return new Promise((resolve, reject) =>
    readFile(`/proc/${pid}/status`, "utf8", (err, text) => {
      if (err) return reject(err);
      resolve(Number(/VmRSS:\s+(\d+)/.exec(text)![1]) / 1024);
    }),
  );
}

async function main(): Promise<void> {
  const figures: Partial<MetadataFigures> = {};
  const print = (line: string) => console.log(line);
  print(
    `metadata bench${SMOKE ? " (smoke)" : ""}: ${READ_TOKENS} tokenURI ids, ${SERVE_TOKENS} served tokens, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );

  // ---- separate node ----
  const node = await ChainNode.start();
  // The service's own proxy counts only the service's calls; the baseline's eth_calls (and those of its
  // requests still in flight when its run ends) go through a second proxy of the same cost.
  const proxy = await RpcProxy.start(node.rpcUrl);
  const direct = await RpcProxy.start(node.rpcUrl);
  const rpc = provider(direct.url);
  const address = await deployWithTokens(rpc, DEPLOYER_KEY, SERVE_TOKENS);
  // The serving runs send far more than a client's METADATA_REQUESTS_PER_MINUTE from one address.
  const service = await ServiceProcess.start({
    rpcUrl: proxy.url,
    stdout: "ignore",
    env: { LOG_LEVEL: "warn", METADATA_REQUESTS_PER_MINUTE: "0" },
  });
  const registered = await fetch(`${service.url}/collections`, {
    method: "POST",
    headers: AUTH,
    body: JSON.stringify({ address }),
  });
  if (registered.status >= 300) throw new Error(await registered.text());
  // The index's backfill of the mints (PGlite's work holds the service's event loop) is not what is measured.
  await indexed(service.url, address, await rpc.getBlockNumber());
  const separate = await tokenUriRatio(service.url, direct.url, address, proxy);
  figures.tokenUriSeparate = separate.ratio;
  figures.repeatCalls = separate.calls ?? 0;
  figures.errors = separate.apiRun.errors;
  print(
    `tokenURI separate node: ${separate.ratio.toFixed(2)}x (api ${separate.apiRun.rps.toFixed(0)} rps vs eth_call ${separate.directRun.rps.toFixed(0)} rps), JSON-RPC calls during the repeat reads: ${separate.calls}`,
  );

  // ---- PUT, commit, reveal, serving, CAR ----
  const documents = Array.from({ length: SERVE_TOKENS }, (_, i) => ({
    tokenId: String(i + 1),
    name: `Token #${i + 1}`,
    description: "A benchmark token with a description of a realistic length, to weigh like a real document.",
    image: `ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/${i + 1}.png`,
    attributes: [
      { trait_type: "Background", value: ["Blue", "Red", "Green"][i % 3] },
      { trait_type: "Eyes", value: `Eyes ${i % 17}` },
      { trait_type: "Level", value: i % 100, display_type: "number" },
    ],
  }));
  const putStarted = performance.now();
  const put = await fetch(`${service.url}/collections/${address}/metadata`, {
    method: "PUT",
    headers: AUTH,
    body: JSON.stringify({ placeholder: { name: "Unrevealed" }, tokens: documents }),
  });
  const putMs = performance.now() - putStarted;
  if (put.status !== 200) throw new Error(await put.text());
  print(`PUT of ${SERVE_TOKENS} documents: ${putMs.toFixed(0)} ms`);
  figures.putMs = putMs;
  for (const step of ["metadata/commit", "reveal"]) {
    // The reveal waits for the commit's reveal block and one block after it (409 REVEAL_TOO_EARLY before).
    if (step === "reveal") await rpc.send("hardhat_mine", ["0x6"]);
    const res = await fetch(`${service.url}/collections/${address}/${step}`, {
      method: "POST",
      headers: AUTH,
      body: JSON.stringify({ privateKey: DEPLOYER_KEY }),
    });
    if (res.status !== 200) throw new Error(`${step}: ${await res.text()}`);
  }
  const { chainId } = await rpc.getNetwork();
  const paths = documents.map((d) => ({ path: `/metadata/${chainId}/${address}/${d.tokenId}.json` }));
  // The static baseline: the same bytes as files, read from disk per request.
  const dir = mkdtempSync(path.join(tmpdir(), "metadata-bench-"));
  for (const d of documents) {
    const res = await fetch(`${service.url}${paths[Number(d.tokenId) - 1].path}`);
    if (res.status !== 200) throw new Error(`serving token ${d.tokenId}: ${res.status}`);
    writeFileSync(path.join(dir, `${d.tokenId}.json`), Buffer.from(await res.arrayBuffer()));
  }
  const statics = await startChildStaticServer(dir);
  const staticUrl = statics.url;
  const get = { connections: 32, duration: SECONDS };
  await cannon({ ...get, ...warmUp(1, paths.length), url: staticUrl, requests: rotating(paths) });
  await cannon({ ...get, ...warmUp(1, paths.length), url: service.url, requests: rotating(paths) });
  const staticRun = await cannon({ ...get, url: staticUrl, requests: rotating(paths) });
  const serveRun = await cannon({ ...get, url: service.url, requests: rotating(paths) });
  const serveRatio = serveRun.rps / staticRun.rps;
  figures.serve = serveRatio;
  figures.serveP99Ms = serveRun.p99;
  figures.errors += serveRun.errors;
  print(
    `serving: ${serveRatio.toFixed(2)}x (service ${serveRun.rps.toFixed(0)} rps, p99 ${serveRun.p99} ms vs static ${staticRun.rps.toFixed(0)} rps, p99 ${staticRun.p99} ms)`,
  );
  statics.close();
  rmSync(dir, { recursive: true, force: true });

  const rssBefore = await rssMb(service.pid);
  let rssPeak = rssBefore;
  const sampler = setInterval(
    () =>
      void rssMb(service.pid).then(
        (mb) => (rssPeak = Math.max(rssPeak, mb)),
        () => {},
      ),
    50,
  );
  const carStarted = performance.now();
  const car = await fetch(`${service.url}/collections/${address}/metadata.car`);
  let carBytes = 0;
  for await (const chunk of car.body!) carBytes += (chunk as Uint8Array).length;
  const carMs = performance.now() - carStarted;
  figures.carMs = car.status === 200 ? carMs : Infinity;
  clearInterval(sampler);
  figures.carRssMb = rssPeak - rssBefore;
  print(
    `CAR: ${carBytes} bytes in ${carMs.toFixed(0)} ms, root ${car.headers.get("x-root-cid")}, service RSS ${rssBefore.toFixed(0)} → peak ${rssPeak.toFixed(0)} MB`,
  );
  rpc.destroy();
  await service.stop();
  await proxy.close();
  await direct.close();
  await node.stop();

  // ---- embedded chain ----
  const embedded = await ServiceProcess.start({ stdout: "ignore", env: { LOG_LEVEL: "warn", API_KEY: TEST_API_KEY } });
  const chainUrl = `http://127.0.0.1:${embedded.chainPort}`;
  const embeddedRpc = provider(chainUrl);
  const embeddedAddress = await deployWithTokens(embeddedRpc, EMBEDDED_KEY, READ_TOKENS);
  const embeddedRegistered = await fetch(`${embedded.url}/collections`, {
    method: "POST",
    headers: AUTH,
    body: JSON.stringify({ address: embeddedAddress }),
  });
  if (embeddedRegistered.status >= 300) throw new Error(await embeddedRegistered.text());
  await indexed(embedded.url, embeddedAddress, await embeddedRpc.getBlockNumber());
  const inProcess = await tokenUriRatio(embedded.url, chainUrl, embeddedAddress);
  figures.tokenUriEmbedded = inProcess.ratio;
  figures.errors += inProcess.apiRun.errors;
  print(
    `tokenURI embedded: ${inProcess.ratio.toFixed(2)}x (api ${inProcess.apiRun.rps.toFixed(0)} rps vs eth_call ${inProcess.directRun.rps.toFixed(0)} rps)`,
  );
  embeddedRpc.destroy();
  await embedded.stop();

  print(
    `load after: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  process.exitCode = verdict(metadataChecks(figures as MetadataFigures), print);
}

main().catch((err) => {
  console.error(err);
  // Exit now: a service or node left running would keep the process (and a smoke run) waiting.
  process.exit(1);
});
