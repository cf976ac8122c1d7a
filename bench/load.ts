/** Load helpers shared by bench/api.ts and bench/chains.ts: autocannon runs, their median round, a collection to read. */
import { loadavg } from "node:os";
import autocannon from "autocannon";
import { NonceManager, Wallet, type JsonRpcProvider } from "ethers";
import { collectionInterface, DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import type { RpcProxy } from "../test/support/rpc-proxy";

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** JSON-RPC calls the node received per request answered, counted at the proxy (none in process). */
  calls?: number;
}

/** autocannon's run of `opts`; with a proxy, the calls it counted over the run per request answered. */
export async function cannon(opts: autocannon.Options, proxy?: RpcProxy): Promise<Figures> {
  proxy?.resetCounts();
  const started = performance.now();
  const result = await autocannon({ ...opts, method: "POST", headers: { "content-type": "application/json" } });
  const seconds = (performance.now() - started) / 1000; // autocannon's own duration is whole seconds
  return {
    rps: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    calls: proxy && result.requests.total > 0 ? proxy.total() / result.requests.total : undefined,
  };
}

/** One request after another takes the next body: no two requests in flight read the same token. */
export function rotating(bodies: string[]): autocannon.Request[] {
  let next = 0;
  return [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }];
}

/** The median round by throughput, with the errors of every round. */
export function medianRound(rounds: Figures[]): Figures {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return { ...sorted[Math.floor(sorted.length / 2)], errors: rounds.reduce((sum, r) => sum + r.errors, 0) };
}

/** Deploys the reference collection from `key` and mints tokens 1 to `tokens`, so that tokenURI answers for each. */
export async function deployWithTokens(provider: JsonRpcProvider, key: string, tokens: number): Promise<string> {
  const deployer = new NonceManager(new Wallet(key, provider));
  const deployed = await (await deployer.sendTransaction(await deployTransaction(DEFAULT_COLLECTION))).wait();
  const contractAddress = deployed!.contractAddress!;
  const perTx = Number(DEFAULT_COLLECTION.maxMintAmountPerTx);
  const mintTo = collectionInterface().encodeFunctionData("mintForFree", [perTx, await deployer.getAddress()]);
  for (let minted = 0; minted < tokens; minted += perTx)
    await (await deployer.sendTransaction({ to: contractAddress, data: mintTo })).wait();
  return contractAddress;
}

/** The machine's load averages, printed beside a bench's figures. */
export const machineLoad = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;

/** What `postLoad` measured: Figures, with the run's seconds and the requests answered 200. */
export interface PostFigures extends Figures {
  seconds: number;
  answered: number;
}

/**
 * `count` POSTs of `body` to `url`, `concurrency` at a time, each timed; one answered other than 200
 * counts as an error (the first is printed).
 */
export async function postLoad(
  url: string,
  body: string,
  { count, concurrency, headers = {} }: { count: number; concurrency: number; headers?: Record<string, string> },
): Promise<PostFigures> {
  const latencies: number[] = [];
  let errors = 0;
  let started = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (started++ < count) {
      const begin = performance.now();
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body,
      });
      const text = await res.text();
      if (res.status === 200) latencies.push(performance.now() - begin);
      else if (errors++ === 0) console.error(`first failure: ${res.status} ${text.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return { rps: latencies.length / seconds, seconds, answered: latencies.length, p50: at(0.5), p99: at(0.99), errors };
}
