/**
 * What an access key costs a request: POST /nft/tokenURI on one service (a separate `hardhat node`,
 * PGlite, open mode) called without a key (the baseline) and with an access key (nft:read, limited
 * to the collection), in the same run on the same service; the root API_KEY is measured beside
 * them for reference.
 *
 *  - latency: one autocannon connection sending open, access-key and root requests in turn, so
 *    that whatever else loads the machine falls on the three alike; each response time is taken
 *    from autocannon's 'response' event (sub-millisecond; its histogram keeps whole milliseconds).
 *    Target: the key adds <= 0.5 ms at p50.
 *  - throughput: 16 connections, as bench/api.ts, one side per run, the sides alternating round by
 *    round; the ratio key/open of requests per second (median round).
 *
 * BENCH_ROUNDS (default 3) rounds of BENCH_SECONDS (default 5) each.
 * Run: npm run bench:access
 */
import { loadavg } from "node:os";
import autocannon from "autocannon";
import { JsonRpcProvider, Network, NonceManager, Wallet } from "ethers";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { ChainNode, DEV_KEYS, ServiceProcess, TEST_API_KEY } from "../test/api/harness";
import { accessChecks, verdict } from "./checks";
import { envSized, sized } from "./smoke";

const SECONDS = envSized("BENCH_SECONDS", 5, 2);
const ROUNDS = envSized("BENCH_ROUNDS", 3, 1);
/** The throughput runs (and warm-ups): 1 s in smoke mode, where only the latency runs need answers on every side. */
const THROUGHPUT_SECONDS = sized(SECONDS, 1);
const THROUGHPUT_CONNECTIONS = 16;
// The most an access key may add to a tokenURI's p50: ACCESS_TARGET_MS in ./checks.
const JSON_TYPE = { "content-type": "application/json" };

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

type Side = "open (no key)" | "access key" | "root API_KEY";

function percentiles(times: number[]): { p50: number; p99: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

/** One side per run: requests per second, and percentiles from every 200's response time. */
function cannon(url: string, body: string, headers: Record<string, string>, connections: number): Promise<Figures> {
  return new Promise((resolve, reject) => {
    const times: number[] = [];
    const started = performance.now();
    const instance = autocannon(
      { url, method: "POST", body, headers: { ...JSON_TYPE, ...headers }, connections, duration: THROUGHPUT_SECONDS },
      (err, result) => {
        if (err) return reject(err);
        const seconds = (performance.now() - started) / 1000;
        resolve({ ...percentiles(times), rps: result.requests.total / seconds, errors: result.errors + result.non2xx });
      },
    );
    instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status === 200) times.push(ms);
    });
  });
}

/**
 * One connection cycling through the sides' requests, each response time filed under its side:
 * autocannon calls a request's onResponse, then emits 'response' with its time, in the same tick.
 */
function interleaved(
  url: string,
  body: string,
  sides: Record<Side, Record<string, string>>,
): Promise<Map<Side, number[]>> {
  return new Promise((resolve, reject) => {
    const times = new Map<Side, number[]>();
    let answered: Side | undefined;
    const requests = (Object.entries(sides) as [Side, Record<string, string>][]).map(([side, headers]) => ({
      method: "POST" as const,
      path: new URL(url).pathname,
      headers: { ...JSON_TYPE, ...headers },
      body,
      onResponse: (status: number) => {
        answered = status === 200 ? side : undefined;
      },
    }));
    const instance = autocannon({ url, requests, connections: 1, duration: SECONDS }, (err, result) => {
      if (err) return reject(err);
      const errors = result.errors + result.non2xx;
      if (errors > 0) return reject(new Error(`interleaved run: ${errors} errors`));
      resolve(times);
    });
    instance.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => {
      if (answered) times.set(answered, [...(times.get(answered) ?? []), ms]);
      answered = undefined;
    });
  });
}

function medianRound(rounds: Figures[]): Figures {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return { ...sorted[Math.floor(sorted.length / 2)], errors: rounds.reduce((sum, r) => sum + r.errors, 0) };
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

async function main(): Promise<void> {
  console.error(`load average before: ${load()}`);
  const node = await ChainNode.start();
  const provider = new JsonRpcProvider(node.rpcUrl, Network.from(31337), {
    staticNetwork: true,
    cacheTimeout: -1,
    batchMaxCount: 1,
  });
  const service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, stdout: "ignore" });
  try {
    const contractAddress = await deployWithToken(provider, DEV_KEYS[0]);
    const made = await fetch(`${service.url}/access-keys`, {
      method: "POST",
      headers: { ...JSON_TYPE, Authorization: `Bearer ${TEST_API_KEY}` },
      body: JSON.stringify({ name: "bench", scopes: ["nft:read"], collections: [contractAddress] }),
    });
    if (made.status !== 201) throw new Error(`POST /access-keys answered ${made.status}: ${await made.text()}`);
    const accessKey = ((await made.json()) as { key: string }).key;

    const url = `${service.url}/nft/tokenURI`;
    const body = JSON.stringify({ privateKey: DEV_KEYS[1], contractAddress, tokenId: "1" });
    const sides: Record<Side, Record<string, string>> = {
      "open (no key)": {},
      "access key": { Authorization: `Bearer ${accessKey}` },
      "root API_KEY": { Authorization: `Bearer ${TEST_API_KEY}` },
    };
    const sideNames = Object.keys(sides) as Side[];

    console.error("warming up");
    for (const headers of Object.values(sides)) await cannon(url, body, headers, THROUGHPUT_CONNECTIONS);

    const latency = new Map<Side, number[]>();
    const addedPerRound: string[] = [];
    const throughput = new Map<Side, Figures[]>();
    for (let round = 0; round < ROUNDS; round++) {
      console.error(`round ${round + 1}/${ROUNDS}`);
      const times = await interleaved(url, body, sides);
      for (const [side, list] of times) latency.set(side, [...(latency.get(side) ?? []), ...list]);
      const roundP50 = (side: Side) => percentiles(times.get(side) ?? []).p50;
      addedPerRound.push((roundP50("access key") - roundP50("open (no key)")).toFixed(3));
      for (const side of sideNames) {
        throughput.set(side, [
          ...(throughput.get(side) ?? []),
          await cannon(url, body, sides[side], THROUGHPUT_CONNECTIONS),
        ]);
      }
    }

    // A side with no answer in a short run (smoke mode on a loaded machine) has NaN percentiles.
    const lat = (side: Side) => ({ ...percentiles(latency.get(side) ?? []), n: latency.get(side)?.length ?? 0 });
    const thr = (side: Side) => medianRound(throughput.get(side)!);
    console.table(
      Object.fromEntries(
        sideNames.map((side) => [
          side,
          {
            "p50 ms (1 conn)": lat(side).p50.toFixed(3),
            "p99 ms (1 conn)": lat(side).p99.toFixed(3),
            "requests (1 conn)": lat(side).n,
            [`req/s (${THROUGHPUT_CONNECTIONS} conn)`]: thr(side).rps.toFixed(0),
            [`p50 ms (${THROUGHPUT_CONNECTIONS} conn)`]: thr(side).p50.toFixed(3),
            errors: thr(side).errors,
          },
        ]),
      ),
    );
    const open = lat("open (no key)");
    const keyed = lat("access key");
    const added = keyed.p50 - open.p50;
    const errors = sideNames.reduce((sum, side) => sum + thr(side).errors, 0);
    const rpsRatio = (side: Side) => (thr(side).rps / thr("open (no key)").rps).toFixed(3);
    console.log(
      `p50 open ${open.p50.toFixed(3)} ms, with an access key ${keyed.p50.toFixed(3)} ms: the key adds ` +
        `${added.toFixed(3)} ms (ratio ${(keyed.p50 / open.p50).toFixed(3)}x; per round: ${addedPerRound.join(", ")} ms)`,
    );
    console.log(
      `req/s at ${THROUGHPUT_CONNECTIONS} connections, access key / open = ${rpsRatio("access key")}x; ` +
        `root API_KEY / open = ${rpsRatio("root API_KEY")}x`,
    );
    process.exitCode = verdict(accessChecks({ addedMs: added, errors }));
    console.error(`load average after: ${load()}`);
  } finally {
    provider.destroy();
    await service.stop();
    await node.stop();
  }
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

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
