/**
 * `npm run build` (after `hardhat compile`): the production output in dist/, run with
 * `node dist/server/cli.js` and production dependencies alone.
 *  1. server/ compiled by tsc (tsconfig.build.json; server/embedded, the Hardhat dev chain, left out);
 *  2. the collection's and the editions contract's ABI and bytecode written beside their compiled
 *     modules, so that the output needs no `artifacts/`;
 *  3. the console's page (console/: plain files, no build step) copied to dist/console;
 *  4. the SQL function files (server/db/functions) copied beside the compiled store;
 *  5. a check that nothing in the output requires a development-only package.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { BUILT_IN_ARTIFACT_FILE, HARDHAT_ARTIFACT_PATH } from "../server/chain/collection";
import { BUILT_IN_EDITIONS_ARTIFACT_FILE, HARDHAT_EDITIONS_ARTIFACT_PATH } from "../server/chain/editions";

const ROOT = path.resolve(__dirname, "..");
const DIST = path.join(ROOT, "dist");
/** Packages the production output must never load. */
const DEV_ONLY = /require\("(hardhat|ts-node|typescript|solc|@nomicfoundation\/[^"]+|pino-pretty\/bin)(\/[^"]*)?"\)/;

rmSync(DIST, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
  cwd: ROOT,
  stdio: "inherit",
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

for (const [from, file] of [
  [HARDHAT_ARTIFACT_PATH, BUILT_IN_ARTIFACT_FILE],
  [HARDHAT_EDITIONS_ARTIFACT_PATH, BUILT_IN_EDITIONS_ARTIFACT_FILE],
]) {
  const { abi, bytecode } = JSON.parse(readFileSync(from, "utf8")) as { abi: unknown; bytecode: string };
  const target = path.join(DIST, "server", "chain", file);
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, JSON.stringify({ abi, bytecode }));
}

// Served by server/console/console-routes.ts from dist/console (its libraries from node_modules).
cpSync(path.join(ROOT, "console"), path.join(DIST, "console"), { recursive: true });
// The SQL functions and triggers, which the store applies at each start (server/db/functions.ts).
cpSync(path.join(ROOT, "server", "db", "functions"), path.join(DIST, "server", "db", "functions"), { recursive: true });

const offenders = listFiles(DIST)
  .filter((file) => file.endsWith(".js"))
  .filter((file) => DEV_ONLY.test(readFileSync(file, "utf8")));
if (offenders.length > 0) {
  console.error(`The production output requires development-only packages in:\n  ${offenders.join("\n  ")}`);
  process.exit(1);
}
console.log(`Built ${path.relative(ROOT, DIST)}/: run it with  node dist/server/cli.js  (RPC_URL and API_KEY set)`);

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );
}
