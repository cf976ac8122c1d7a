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
