/**
 * `npm run test:only`: every test file under `hardhat test`, in one mocha process, or with
 * TEST_PARTS=N in N side by side (`.ci/run` says how many CI uses, and why). Much of a test's time is spent waiting (blocks,
 * a service's start, a resend clock) while the cores idle: one process at a time kept CI's 2 cores
 * about three quarters busy. The parts share the machine as two runtimes' runs already do: each test
 * takes its own ports, data directories, nodes and services.
 *
 * Files are dealt by how long each took (test/file-seconds.json), the longest first, each to the part
 * with the least time so far; a file not listed counts as the median. Those that must not run beside
 * each other go first, together: the production build rebuilds dist/, which bin/nft-ops.js runs
 * when it is there, so it shares the first part with the tests that run the CLI. The first part's
 * output is shown as it comes, every other part's once the first has ended; then one line sums
 * them ("N passing"), which CI counts, and one gives each part's minutes.
 *
 * TEST_FILE_SECONDS=<file> writes each file's seconds of this run there (merged over the parts):
 * copy it to test/file-seconds.json when the parts' minutes drift apart.
 */
import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const ROOT = path.resolve(__dirname, "..");
const HARDHAT = path.join(ROOT, "node_modules", ".bin", "hardhat");
const TOGETHER = /nft-ops-cli|npm", \["run", "build"\]/;

const parts = Number(process.env.TEST_PARTS ?? "1");
if (!Number.isInteger(parts) || parts < 1 || parts > 8) {
  console.error(`TEST_PARTS must be a whole number from 1 to 8, not ${process.env.TEST_PARTS}`);
  process.exit(2);
}

/** What `hardhat test` itself loads: every .ts and .js file under test/, in path order. */
function testFiles(dir = path.join(ROOT, "test")): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return testFiles(file);
      return /\.test\.(ts|js)$/.test(entry.name) ? [file] : [];
    });
}

/** Seconds per test file (paths relative to the root), as the file-seconds reporter measured them. */
function fileSeconds(): Record<string, number> {
  return JSON.parse(readFileSync(path.join(ROOT, "test", "file-seconds.json"), "utf8")) as Record<string, number>;
}

function deal(files: string[], count: number, seconds: Record<string, number>): string[][] {
  const known = Object.values(seconds).sort((a, b) => a - b);
  const median = known.length ? known[Math.floor(known.length / 2)] : 1;
  const weight = (file: string) => seconds[path.relative(ROOT, file)] ?? median;
  const dealt: string[][] = Array.from({ length: count }, () => []);
  const load = new Array<number>(count).fill(0);
  const together = files.filter((file) => TOGETHER.test(readFileSync(file, "utf8")));
  const rest = files.filter((file) => !together.includes(file)).sort((a, b) => weight(b) - weight(a));
  for (const file of together) {
    dealt[0].push(file);
    load[0] += weight(file);
  }
  for (const file of rest) {
    const lightest = load.indexOf(Math.min(...load));
    dealt[lightest].push(file);
    load[lightest] += weight(file);
  }
  // Each part runs its files in path order, as one run would.
  return dealt.map((part) => part.sort());
}

/** `hardhat test FILES` (every file when none is given); its output goes to `log` when given, else to ours. */
function runPart(files: string[], log?: { path: string; echo: boolean; seconds: string }): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(HARDHAT, ["test", ...files], {
      cwd: ROOT,
      stdio: log ? ["ignore", "pipe", "pipe"] : "inherit",
      env: log && process.env.TEST_FILE_SECONDS ? { ...process.env, TEST_FILE_SECONDS: log.seconds } : process.env,
    });
    if (log) {
      const file = createWriteStream(log.path);
      for (const stream of [child.stdout!, child.stderr!])
        stream.on("data", (chunk: Buffer) => {
          file.write(chunk);
          if (log.echo) process.stdout.write(chunk);
        });
      child.on("close", (code, signal) => file.end(() => resolve(code ?? (signal ? 1 : 0))));
    } else child.on("close", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** The count mocha printed last in `log` ("  N passing (…)"), 0 if none. */
function passingIn(log: string): number {
  const counts = [...log.matchAll(/^ +(\d+) passing/gm)];
  return counts.length ? Number(counts[counts.length - 1][1]) : 0;
}

async function main(): Promise<void> {
  // process.exitCode, not process.exit(): writes to a pipe (npm run test:only | tee) are asynchronous,
  // and exiting at once loses the last of them, the count line among them.
  if (parts === 1) {
    process.exitCode = await runPart([]);
    return;
  }
  const dealt = deal(testFiles(), parts, fileSeconds());
  const dir = mkdtempSync(path.join(tmpdir(), "test-parts-"));
  const logs = dealt.map((_, i) => path.join(dir, `part-${i + 1}.log`));
  const seconds = dealt.map((_, i) => path.join(dir, `part-${i + 1}.json`));
  const started = Date.now();
  console.log(`  (${dealt.length} parts side by side: ${dealt.map((files) => files.length).join(" + ")} test files)`);
  const minutes: number[] = [];
  const runs = dealt.map((files, i) =>
    runPart(files, { path: logs[i], echo: i === 0, seconds: seconds[i] }).then((code) => {
      minutes[i] = Math.round((Date.now() - started) / 60_000);
      return code;
    }),
  );
  const codes: number[] = [];
  let passing = 0;
  for (const [i, run] of runs.entries()) {
    codes.push(await run);
    const output = readFileSync(logs[i], "utf8");
    passing += passingIn(output);
    if (i > 0) process.stdout.write(`\n  === part ${i + 1} of ${dealt.length}:\n${output}`);
  }
  if (process.env.TEST_FILE_SECONDS) {
    const merged = Object.assign(
      {},
      ...seconds.filter((file) => existsSync(file)).map((file) => JSON.parse(readFileSync(file, "utf8")) as object),
    ) as Record<string, number>;
    writeFileSync(process.env.TEST_FILE_SECONDS, `${JSON.stringify(merged, Object.keys(merged).sort(), 2)}\n`);
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(`\n  ${passing} passing (${dealt.length} parts, ${Math.round((Date.now() - started) / 60_000)}m)`);
  console.log(`  (the parts took ${minutes.map((m) => `${m}m`).join(", ")})`);
  process.exitCode = codes.some((code) => code !== 0) ? 1 : 0;
}

void main();
