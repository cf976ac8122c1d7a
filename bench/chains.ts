/**
 * Issue 43: a second configured chain costs the first nothing. Two services on the same `hardhat
 * node` (chain A), started together: one with CHAINS = [A], one with CHAINS = [A, B] (B a second node
 * of its own id, which the second service follows too: its head polls, its follower, its index).
 * Both are measured on chain A, alternating, ROUNDS times each way, the median round reported:
 *  - reads: POST /nft/tokenURI over rotating token ids, autocannon, READ_CONNECTIONS connections;
 *  - writes: POST /nft/mint(1), MINTS of them CONCURRENCY at a time, each service its own key.
 * Target: two chains >= 0.95x of one, for reads and writes (CHAINS_TARGETS in ./checks).
 * Run: npm run bench:chains   (BENCH_SECONDS, BENCH_MINTS, BENCH_ROUNDS change the load;
 * BENCH_SMOKE=1 for the smoke run)
 */
import { JsonRpcProvider, Network } from "ethers";
import { ChainNode, DEV_KEYS, ServiceProcess } from "../test/api/harness";
import { chainsChecks, verdict } from "./checks";
import { cannon, deployWithTokens, machineLoad, medianRound, postLoad, rotating, type Figures } from "./load";
import { envSized, sized } from "./smoke";

const SECONDS = envSized("BENCH_SECONDS", 5, 1);
const MINTS = envSized("BENCH_MINTS", 100, 8);
const ROUNDS = envSized("BENCH_ROUNDS", 3, 1);
const READ_CONNECTIONS = 10;
const CONCURRENCY = 8;
const READ_TOKENS = sized(100, 10);
const A = 31_601;
const B = 31_602;
const [DEPLOYER_KEY, ONE_CHAIN_MINTER, TWO_CHAINS_MINTER] = DEV_KEYS;

async function main(): Promise<void> {
  console.log(`machine: ${machineLoad()}`);
  const [a, b] = await Promise.all([ChainNode.start(undefined, A), ChainNode.start(undefined, B)]);
  const provider = new JsonRpcProvider(a.rpcUrl, Network.from(A), { staticNetwork: true, cacheTimeout: -1 });
  const services: ServiceProcess[] = [];
  try {
    const contractAddress = await deployWithTokens(provider, DEPLOYER_KEY, READ_TOKENS);
    const chainA = { id: A, name: "a", rpcUrls: [a.rpcUrl] };
    const chainB = { id: B, name: "b", rpcUrls: [b.rpcUrl] };
    services.push(
      ...(await Promise.all([
        ServiceProcess.start({ chains: [chainA], stdout: "ignore" }),
        ServiceProcess.start({ chains: [chainA, chainB], stdout: "ignore" }),
      ])),
    );
    const [one, two] = services;
    const readBodies = Array.from({ length: READ_TOKENS }, (_, i) =>
      JSON.stringify({ chain: "a", privateKey: ONE_CHAIN_MINTER, contractAddress, tokenId: String(i + 1) }),
    );
    const reads = (service: ServiceProcess, seconds = SECONDS) =>
      cannon({
        url: `${service.url}/nft/tokenURI`,
        requests: rotating(readBodies),
        // Smoke mode: a count of reads, not a time, so that a loaded machine still answers some.
        ...sized({ duration: seconds }, { amount: 4 * READ_CONNECTIONS }),
        connections: READ_CONNECTIONS,
      });
    const writes = (service: ServiceProcess, key: string, count = MINTS) =>
      postLoad(
        `${service.url}/nft/mint`,
        JSON.stringify({ chain: "a", privateKey: key, contractAddress, mintAmount: 1 }),
        {
          count,
          concurrency: CONCURRENCY,
        },
      );
    // JIT warm-up of both, and each key's first mints (its nonce read, the signer built) out of the rounds.
    await Promise.all([reads(one, 1), reads(two, 1)]);
    await writes(one, ONE_CHAIN_MINTER, CONCURRENCY);
    await writes(two, TWO_CHAINS_MINTER, CONCURRENCY);
    const rounds: Record<string, Figures[]> = { "reads, one chain": [], "reads, two chains": [] };
    rounds["mints, one chain"] = [];
    rounds["mints, two chains"] = [];
    const readLoad = sized(`${SECONDS} s`, `${4 * READ_CONNECTIONS}`);
    console.error(`measuring: ${ROUNDS} rounds of ${readLoad} of reads and ${MINTS} mints, each way`);
    for (let round = 0; round < ROUNDS; round++) {
      rounds["reads, one chain"].push(await reads(one));
      rounds["reads, two chains"].push(await reads(two));
      rounds["mints, one chain"].push(await writes(one, ONE_CHAIN_MINTER));
      rounds["mints, two chains"].push(await writes(two, TWO_CHAINS_MINTER));
    }
    const rows = Object.fromEntries(Object.entries(rounds).map(([name, r]) => [name, medianRound(r)]));
    console.table(
      Object.fromEntries(
        Object.entries(rows).map(([name, f]) => [
          name,
          { "req/s": f.rps.toFixed(1), "p50 ms": f.p50.toFixed(1), "p99 ms": f.p99.toFixed(1), errors: f.errors },
        ]),
      ),
    );
    const ratio = (kind: "reads" | "mints") => ({
      ratio: rows[`${kind}, two chains`].rps / rows[`${kind}, one chain`].rps,
      errors: rows[`${kind}, two chains`].errors + rows[`${kind}, one chain`].errors,
    });
    console.log(`machine: ${machineLoad()}`);
    // An answer the bench did not expect stops it, in smoke mode too (bench/README.md).
    const failed = Object.entries(rows).filter(([, f]) => f.errors > 0);
    if (failed.length > 0) throw new Error(`errors or non-2xx answers in: ${failed.map(([n]) => n).join(", ")}`);
    process.exitCode = verdict(chainsChecks({ reads: ratio("reads"), writes: ratio("mints") }));
  } finally {
    provider.destroy();
    await Promise.all(services.map((s) => s.stop()));
    await Promise.all([a.stop(), b.stop()]);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
