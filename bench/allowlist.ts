/**
 * The allowlist routes at scale, through HTTP on a real node and service (PGlite): the time of
 * `PUT /collections/{address}/allowlist` with 100,000 entries (tree built, stored, root set on
 * chain, confirmed), and the p50 of `GET …/allowlist/{account}` (entry, minted on chain, proof
 * from the store) at 100,000 entries against its p50 at 100 entries, in the same run, reads of
 * the two alternating so that the machine's load falls on both alike.
 *
 *   npx hardhat run bench/allowlist.ts      (npm run bench:allowlist)
 *
 * Exits non-zero when the PUT takes more than 10 s or the p50 at 100,000 is above 1.2x the p50 at 100.
 */
import { getAddress, hexlify, randomBytes, Wallet } from "ethers";
import { DEFAULT_COLLECTION, deployTransaction } from "../server/chain/collection";
import { ApiClient, ChainNode, DEV_KEYS, ServiceProcess, directProvider } from "../test/api/harness";
import { median } from "./median";
import { checked, sized } from "./smoke";

const READS = sized(300, 5);
const BIG = sized(100_000, 1_000);
const MAX_PUT_MS = 10_000;
const MAX_READ_RATIO = 1.2;

async function main(): Promise<void> {
  const node = await ChainNode.start();
  const service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { LOG_LEVEL: "warn" } });
  const provider = directProvider(node.rpcUrl);
  try {
    const owner = new Wallet(DEV_KEYS[1], provider);
    const deploy = async () => {
      const sent = await owner.sendTransaction(await deployTransaction(DEFAULT_COLLECTION));
      return (await sent.wait())!.contractAddress!;
    };
    const [small, big] = [await deploy(), await deploy()];
    const api = new ApiClient(service.url);
    const entriesOf = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        address: getAddress(hexlify(randomBytes(20))),
        allowance: 1 + (i % 5),
        price: "0",
      }));
    const put = async (collection: string, entries: ReturnType<typeof entriesOf>) => {
      const started = performance.now();
      const res = await api.request("PUT", `/collections/${collection}/allowlist`, {
        json: { privateKey: owner.privateKey, entries },
      });
      if (res.status !== 200) throw new Error(`PUT answered ${res.status}: ${res.text.slice(0, 300)}`);
      return performance.now() - started;
    };
    const smallEntries = entriesOf(100);
    const bigEntries = entriesOf(BIG);
    await put(small, smallEntries);
    const putMs = await put(big, bigEntries);

    const times = { small: [] as number[], big: [] as number[] };
    for (let i = 0; i < READS; i++) {
      for (const [size, collection, entries] of [
        ["small", small, smallEntries],
        ["big", big, bigEntries],
      ] as const) {
        const account = entries[Math.floor(Math.random() * entries.length)].address;
        const started = performance.now();
        const res = await api.get(`/collections/${collection}/allowlist/${account}`);
        times[size].push(performance.now() - started);
        if (res.status !== 200) throw new Error(`GET answered ${res.status}: ${res.text}`);
      }
    }
    const p50 = { small: median(times.small), big: median(times.big) };
    const ratio = p50.big / p50.small;
    console.log(
      `PUT /collections/{address}/allowlist, 100,000 entries: ${(putMs / 1000).toFixed(1)} s (target <= 10 s)`,
    );
    console.log(
      `GET …/allowlist/{account} p50: ${p50.small.toFixed(2)} ms at 100 entries, ${p50.big.toFixed(2)} ms at 100,000 (${READS} reads each)`,
    );
    const putOk = putMs <= MAX_PUT_MS;
    const readOk = ratio <= MAX_READ_RATIO;
    console.log(
      `${putOk ? "PASS" : "FAIL"}: PUT of 100,000 entries in ${(putMs / 1000).toFixed(1)} s (target <= 10 s)`,
    );
    console.log(
      `${readOk ? "PASS" : "FAIL"}: GET p50 at 100,000 = ${ratio.toFixed(3)}x p50 at 100 (target <= ${MAX_READ_RATIO}x)`,
    );
    if (!putOk || !readOk) process.exitCode = checked(1);
  } finally {
    provider.destroy();
    await service.stop();
    await node.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
