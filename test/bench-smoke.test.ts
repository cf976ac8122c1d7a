/**
 * Every bench still runs: each `bench:*` script of package.json, and `soak`, in smoke mode
 * (BENCH_SMOKE=1, bench/smoke.ts): tiny sizes through the same code paths, seconds each. A bench
 * passes when it exits 0; its figures are not checked at those sizes (a figure it did not measure
 * at all, or a correctness check such as soak's, still fails it).
 *
 * The convention, for whoever adds a bench:
 *  - name its script `bench:NAME` in package.json (this file finds it there);
 *  - take every size (rows, rounds, seconds, mints) through `sized(full, smoke)` or
 *    `envSized(VARIABLE, full, smoke)` from bench/smoke.ts, so that smoke mode runs in seconds;
 *  - end through `verdict` (bench/checks.ts) or `checked(code)` (bench/smoke.ts), which let a
 *    figure off its target through in smoke mode; exit non-zero on anything that did not run.
 *
 * When to run them. A bench waits on its node, its service's start and its blocks much of the time,
 * so the benches overlap the rest of the suite: a root `before` hook starts them, one at a time, when
 * the run starts, and this file runs last (hardhat.config.ts orders it so), where it waits for what
 * is left, three at a time. In CI the file took 200 to 230 s of the run's time when the
 * benches ran three at a time in it alone; beside the suite they cost its CPU, not its wall time.
 * Longest first, so that the pool does not end on one long bench alone. Each one's time is printed.
 * Run alone (`npx hardhat test test/bench-smoke.test.ts`) they start three at a time.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { beforeKill, trackChild } from "./support/start-log";

const ROOT = path.resolve(__dirname, "..");
const PER_BENCH_MS = 480_000;
/** Benches at once beside the other test files, and once only this file is left. */
const BESIDE_THE_SUITE = 1;
const AT_THE_END = 3;

/**
 * The longest benches in smoke mode (as measured), longest first: they start first, so
 * that the pool does not end on one long bench alone. The others follow in package.json's order.
 */
const LONGEST_FIRST = [
  "bench:memory",
  "bench:webhooks",
  "bench:index",
  "bench:blocktime",
  "bench:metadata",
  "bench:api",
  "bench:access",
  "bench:chains",
  "soak",
  "bench:failover",
  "bench:allowlist",
  "bench:wallets",
  "bench:jobs",
  "bench:mcp",
  "bench:users",
  "bench:finality",
  "bench:webhooks:store",
  "bench:operations",
];
const rank = (name: string) => (LONGEST_FIRST.includes(name) ? LONGEST_FIRST.indexOf(name) : LONGEST_FIRST.length);

const scripts = Object.keys(
  (JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts,
)
  .filter((name) => name.startsWith("bench:") || name === "soak")
  .sort((a, b) => rank(a) - rank(b)); // stable: the others keep package.json's order

interface Run {
  code: number | null;
  ms: number;
  output: string;
}

/** The bench runs under way, stopped with the run if it ends before them. */
const children = new Set<ChildProcess>();

/** `npm run NAME` in smoke mode, in its own process group (so that a timeout ends its node and service too). */
function smoke(name: string): Promise<Run> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn("npm", ["run", "--silent", name], {
      cwd: ROOT,
      env: { ...process.env, BENCH_SMOKE: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    trackChild("bench smoke", child, name);
    children.add(child);
    let output = "";
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => {
      output += `\n(killed after ${PER_BENCH_MS} ms)`;
      killGroup(child);
    }, PER_BENCH_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, ms: Date.now() - started, output });
    });
  });
}

function killGroup(child: ChildProcess): void {
  beforeKill(child);
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * `.ci/run` sets BENCH_SMOKE_OFF=1 for its second runtime (Node 24): the benches are measured on the
 * machine's Node, and proving each still runs once is what this file is for; a second pass on the other
 * runtime doubled CI's time for no new fact. Nothing is registered then (a skipped test fails CI).
 */
const off = process.env.BENCH_SMOKE_OFF === "1";

/** The pool: each bench's run, settled when the pool has run it; workers take the next from the queue. */
const runs = new Map<string, Promise<Run>>();
const settle = new Map<string, (run: Run) => void>();
const queue = [...scripts];
let workers = 0;
let started = 0;
/** When the last bench ended. */
let ended = 0;

/** Grows the pool to `size` workers (it never shrinks); the first call makes each bench's promise. */
function growPool(size: number): void {
  if (started === 0) {
    started = Date.now();
    for (const name of scripts) runs.set(name, new Promise((resolve) => settle.set(name, resolve)));
  }
  for (; workers < size; workers++)
    void (async () => {
      for (let name = queue.shift(); name; name = queue.shift()) {
        settle.get(name)!(await smoke(name));
        ended = Date.now();
      }
    })();
}

if (!off) {
  // Root hooks (outside any describe): before the first test file's tests, and after the last.
  // Under --grep the benches wait for this file: a filtered run may not reach it.
  before(function () {
    if (!process.argv.includes("--grep")) growPool(BESIDE_THE_SUITE);
  });
  after(function () {
    // Only when the run stopped early (a bail, a filter): a bench still running is stopped with it.
    for (const child of children) killGroup(child);
  });

  describe("benches in smoke mode (BENCH_SMOKE=1): each still runs", function () {
    let reached = 0;
    before(function () {
      expect(scripts.length, "bench scripts in package.json").to.be.greaterThan(10);
      reached = Date.now();
      growPool(AT_THE_END);
    });

    after(function () {
      const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(0);
      console.log(
        `      all ${scripts.length} benches in ${seconds(ended - started)} s from the run's start, ` +
          `${seconds(ended - reached)} s of them after the other test files`,
      );
    });

    for (const name of scripts) {
      it(`npm run ${name}`, async function () {
        this.timeout(scripts.length * PER_BENCH_MS);
        const { code, ms, output } = await runs.get(name)!;
        console.log(`      ${name}: ${(ms / 1000).toFixed(1)} s`);
        expect(code, `${name} exited ${code}; its output ends:\n${output.slice(-4_000)}`).to.equal(0);
      });
    }
  });
}
