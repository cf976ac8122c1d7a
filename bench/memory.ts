/**
 * The service's memory (issue 47 item 17): RSS of `npm start`'s process, on the embedded chain
 * (Hardhat in process) and on a separate `hardhat node`, each with PGlite in a fresh DATA_DIR (a
 * first start, initdb included) and with PostgreSQL (DATABASE_URL, a throwaway cluster) beside it:
 *  - idle: IDLE_MS after its /health first answers;
 *  - after load: MINT_SECONDS of keyed mints through the API from 4 keys, 4 a second in all (as
 *    bench/soak.ts sends them), then IDLE_MS idle again.
 * Goal (embedded chain, PGlite): idle <= 600 MB, after load <= 800 MB. The PostgreSQL rows are the
 * baseline: what the same process takes without an embedded database.
 * Run: npm run bench:memory   (BENCH_MINT_SECONDS changes the load; BENCH_SMOKE=1: tiny sizes)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ApiClient, ChainNode, DEV_KEYS, ServiceProcess, deployWithScript, sleep } from "../test/api/harness";
import { startPostgresServer } from "../test/users/postgres-server";
import { MEMORY_TARGETS, memoryChecks, verdict } from "./checks";
import { processRssMb } from "./proc-cpu";
import { envSized, sized } from "./smoke";

const IDLE_MS = sized(5_000, 250);
const MINT_SECONDS = envSized("BENCH_MINT_SECONDS", 60, 1);
const SENDERS = DEV_KEYS.slice(4, 8);

/** Keyed mints from each sender, one every SENDERS.length / 4 s each, for MINT_SECONDS; each answer 200 or 202. */
async function load(api: ApiClient, collection: string): Promise<number> {
  const end = Date.now() + MINT_SECONDS * 1000;
  let sent = 0;
  await Promise.all(
    SENDERS.map(async (privateKey, i) => {
      while (Date.now() < end) {
        const res = await api.post(
          "/nft/mint",
          { privateKey, contractAddress: collection, mintAmount: 1 },
          { "Idempotency-Key": `memory-${i}-${sent++}` },
        );
        if (res.status !== 200 && res.status !== 202) throw new Error(`mint answered ${res.status}: ${res.text}`);
        await sleep((SENDERS.length / 4) * 1000);
      }
    }),
  );
  return sent;
}

async function main(): Promise<void> {
  const pg = await startPostgresServer();
  const node = await ChainNode.start();
  const dirs: string[] = [];
  const rows: Record<string, Record<string, number | string>> = {};
  const figures: Parameters<typeof memoryChecks>[0] = { embeddedPglite: { idle: NaN, loaded: NaN } };
  try {
    const separate = await deployWithScript(node.rpcUrl, { NFT_MAX_SUPPLY: "1000000" });
    for (const chain of ["embedded chain", "separate node"] as const) {
      for (const store of ["PGlite", "PostgreSQL"] as const) {
        const dataDir = mkdtempSync(path.join(tmpdir(), "bench-memory-"));
        dirs.push(dataDir);
        // A fresh DATA_DIR (not the harness's seeded store): a first start runs initdb, as `npm start` does.
        const env: Record<string, string> =
          store === "PGlite" ? { DATA_DIR: dataDir } : { DATABASE_URL: await pg.createDatabase() };
        const service = await ServiceProcess.start({
          rpcUrl: chain === "separate node" ? node.rpcUrl : undefined,
          env: { ...env, LOG_LEVEL: "warn" },
        });
        try {
          await sleep(IDLE_MS);
          const idle = processRssMb(service.pid);
          // The senders are Hardhat's funded dev accounts on either chain.
          const collection =
            chain === "separate node"
              ? separate
              : await deployWithScript(`http://127.0.0.1:${service.chainPort}`, { NFT_MAX_SUPPLY: "1000000" });
          const mints = await load(new ApiClient(service.url), collection);
          await sleep(IDLE_MS);
          const loaded = processRssMb(service.pid);
          rows[`${chain}, ${store}`] = { "idle RSS MB": idle, "after load RSS MB": loaded, mints };
          if (chain === "embedded chain" && store === "PGlite") figures.embeddedPglite = { idle, loaded };
        } finally {
          await service.stop();
        }
      }
    }
  } finally {
    console.log(
      `RSS of npm start's process, ${IDLE_MS / 1000} s idle after start, and after ${MINT_SECONDS} s of mints (4 a second) and ${IDLE_MS / 1000} s idle:`,
    );
    console.table(rows);
    console.log(
      `goal (embedded chain, PGlite): idle <= ${MEMORY_TARGETS.idleMb} MB, after load <= ${MEMORY_TARGETS.loadedMb} MB`,
    );
    process.exitCode = verdict(memoryChecks(figures));
    await node.stop();
    await pg.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
