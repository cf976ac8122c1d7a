/**
 * What RPC failover costs (issue 43), on a `hardhat node` (automining) reached through RpcProxy
 * instances, the service a separate process (`npm start` with RPC_URL):
 *  (a) JSON-RPC calls per operation, OPS sequential tokenURI and mint requests each, on two
 *      services started together: one URL (today's shape; the baseline, counted at its proxy) and
 *      two URLs, counted per chain (the service's rpc_calls_total, what the provider asks) and at
 *      both proxies (a signed transaction goes to every URL: one more eth_sendRawTransaction per
 *      write per extra URL).
 *  (b) reads (tokenURI, CONCURRENCY loops for SECONDS) with two URLs: both healthy, against the
 *      first URL hanging, measured once its first timeout has marked it down: no read waits on it.
 *      ROUNDS rounds, healthy and hung in turn; the ratio is hung / healthy requests per second.
 * Run: npm run bench:failover   (BENCH_SMOKE=1: a few seconds, to check that it runs; BENCH_OPS,
 * BENCH_SECONDS, BENCH_ROUNDS)
 */
import { loadavg } from "node:os";
import { Wallet } from "ethers";
import {
  ApiClient,
  ChainNode,
  DEV_KEYS,
  ServiceProcess,
  deployWithScript,
  sleep,
  type ApiResponse,
} from "../test/api/harness";
import { RpcProxy } from "../test/support/rpc-proxy";
import { failoverChecks, verdict } from "./checks";

const SMOKE = process.env.BENCH_SMOKE === "1";
const OPS = Number(process.env.BENCH_OPS ?? (SMOKE ? 5 : 100));
const SECONDS = Number(process.env.BENCH_SECONDS ?? (SMOKE ? 1 : 8));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? (SMOKE ? 1 : 3));
const CONCURRENCY = 8;
const READER = DEV_KEYS[5];
const SERVICE_ENV = { LOG_LEVEL: "warn", RPC_TIMEOUT_MS: "5000" };

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

interface Counted {
  perOp: Record<string, number>;
  byMethod: Record<string, string>;
}

async function main(): Promise<void> {
  log(
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; OPS=${OPS} SECONDS=${SECONDS} ROUNDS=${ROUNDS}${SMOKE ? " (smoke)" : ""}`,
  );
  const node = await ChainNode.start();
  const proxies: RpcProxy[] = [];
  const services: ServiceProcess[] = [];
  try {
    const collection = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "1000000", NFT_MAX_MINT_PER_TX: "5" });
    const [only, first, second] = await Promise.all([0, 1, 2].map(() => RpcProxy.start(node.rpcUrl)));
    proxies.push(only, first, second);
    const minter = new Wallet(DEV_KEYS[6]);
    const bodies = {
      tokenURI: { privateKey: READER, contractAddress: collection, tokenId: "1" },
      mint: { privateKey: minter.privateKey, contractAddress: collection, mintAmount: 1 },
    };

    // (a) One URL (today's shape) and two URLs side by side, started together on the same chain, so
    // that each indexes the same blocks; each operation measured on one, then on the other.
    const [one, two] = await Promise.all([
      ServiceProcess.start({ rpcUrl: only.url, env: SERVICE_ENV }),
      ServiceProcess.start({ rpcUrl: `${first.url},${second.url}`, env: SERVICE_ENV }),
    ]);
    services.push(one, two);
    const oneApi = new ApiClient(one.url);
    const api = new ApiClient(two.url);
    await expectOk(await oneApi.post("/nft/mint", bodies.mint)); // token 1, for tokenURI
    const baseline: Counted = { perOp: {}, byMethod: {} };
    const atProxies: Counted = { perOp: {}, byMethod: {} };
    const perChain: Record<string, number> = {};
    for (const [name, body] of Object.entries(bodies)) {
      const a = await callsPerOperation(oneApi, `/nft/${name}`, body, [only]);
      baseline.perOp[name] = a.perOp;
      baseline.byMethod[name] = a.byMethod;
      const b = await callsPerOperation(api, `/nft/${name}`, body, [first, second]);
      atProxies.perOp[name] = b.perOp;
      atProxies.byMethod[name] = b.byMethod;
      perChain[name] = b.perChain;
    }
    console.table({
      "one URL (baseline), at the proxy": baseline.perOp,
      "two URLs, per chain (rpc_calls_total)": perChain,
      "two URLs, at both proxies": atProxies.perOp,
    });
    console.table({ "one URL": baseline.byMethod, "two URLs, both proxies": atProxies.byMethod });
    await one.stop();
    services.splice(services.indexOf(one), 1);

    // (b) reads: healthy, then the first URL hanging (after its first timeout), in turn.
    const healthy: number[] = [];
    const hung: number[] = [];
    let errors = 0;
    for (let round = 0; round < ROUNDS; round++) {
      await until(api, "both URLs ok", 120_000, (s) => s.every((u) => u.status === "ok"));
      const h = await readRate(api, bodies.tokenURI);
      healthy.push(h.rate);
      errors += h.errors;
      first.mode = "hang";
      await api.post("/nft/tokenURI", bodies.tokenURI); // the first timeout marks it down
      await until(api, "the first URL down", 30_000, (s) => s[0].status === "down");
      const d = await readRate(api, bodies.tokenURI);
      hung.push(d.rate);
      errors += d.errors;
      first.mode = "forward";
      log(`round ${round + 1}: healthy ${h.rate.toFixed(0)} req/s, first URL hung ${d.rate.toFixed(0)} req/s`);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const ratio = mean(hung) / mean(healthy);
    log(
      `reads with the first URL hung / healthy = ${ratio.toFixed(3)}x (${errors} errors); load ${loadavg()[0].toFixed(2)}`,
    );
    process.exitCode = verdict(
      failoverChecks({
        readRatio: ratio,
        readErrors: errors,
        perChain,
        baseline: baseline.perOp,
      }),
    );
  } finally {
    for (const s of services) await s.stop().catch(() => {});
    for (const p of proxies) await p.close().catch(() => {});
    await node.stop();
  }
}

async function expectOk(res: ApiResponse): Promise<void> {
  if (res.status !== 200) throw new Error(`${res.status} ${res.text.slice(0, 300)}`);
}

/** The service's rpc_calls_total, summed over methods: the calls the provider made, whatever the URLs. */
async function rpcCallsTotal(api: ApiClient): Promise<number> {
  const text = (await api.get("/metrics")).text;
  let sum = 0;
  for (const line of text.split("\n")) {
    const match = /^rpc_calls_total\{[^}]*\} (\d+(?:\.\d+)?)$/.exec(line);
    if (match) sum += Number(match[1]);
  }
  return sum;
}

/**
 * OPS sequential requests of `path`: JSON-RPC calls per request counted at `proxies`, by method, and
 * per chain (the service's rpc_calls_total: what its provider asked, whatever the URLs).
 */
async function callsPerOperation(
  api: ApiClient,
  path: string,
  body: Record<string, unknown>,
  proxies: RpcProxy[],
): Promise<{ perOp: number; perChain: number; byMethod: string }> {
  // Steady state, not counted: the collection checked and indexed, its first blocks read.
  for (let i = 0; i < 3; i++) await expectOk(await api.post(path, body));
  await sleep(SMOKE ? 200 : 2_000);
  for (const p of proxies) p.resetCounts();
  const chainBefore = await rpcCallsTotal(api);
  for (let i = 0; i < OPS; i++) await expectOk(await api.post(path, body));
  const chainCalls = (await rpcCallsTotal(api)) - chainBefore;
  const counts = new Map<string, number>();
  for (const p of proxies) for (const [method, n] of p.calls) counts.set(method, (counts.get(method) ?? 0) + n);
  return {
    perOp: round2([...counts.values()].reduce((a, b) => a + b, 0) / OPS),
    perChain: round2(chainCalls / OPS),
    byMethod: [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([method, n]) => `${method} ${(n / OPS).toFixed(2)}`)
      .join(", "),
  };
}

/** CONCURRENCY loops of `body` for SECONDS: requests answered 200 per second, and the others. */
async function readRate(api: ApiClient, body: Record<string, unknown>): Promise<{ rate: number; errors: number }> {
  let answered = 0;
  let errors = 0;
  const end = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const res = await api.post("/nft/tokenURI", body);
        if (res.status === 200) answered++;
        else errors++;
      }
    }),
  );
  api.responseTexts.length = 0;
  return { rate: answered / ((performance.now() - started) / 1000), errors };
}

async function until(
  api: ApiClient,
  what: string,
  ms: number,
  check: (states: Array<{ status: string }>) => boolean,
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const states = ((await api.get("/health")).body.rpcUrls ?? []) as Array<{ status: string }>;
    if (states.length > 0 && check(states)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms (${JSON.stringify(states)})`);
    await sleep(200);
  }
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

void main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
