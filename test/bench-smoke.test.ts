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
 * The benches run three at a time, longest first; each one's time is printed. Three, not two: on
 * 2 cores at a load of about 15 (a CI replica beside), the file took 772 s at three against 1037 s
 * at two, for the same CPU time (664 s and 657 s): a bench waits on its node, its service's start
 * and its blocks much of the time, and a third one fills those gaps.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { beforeKill, trackChild } from "./support/start-log";

const ROOT = path.resolve(__dirname, "..");
const PER_BENCH_MS = 480_000;
const AT_ONCE = 3;

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
    let output = "";
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => {
      output += `\n(killed after ${PER_BENCH_MS} ms)`;
      beforeKill(child);
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        // already gone
      }
    }, PER_BENCH_MS);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, ms: Date.now() - started, output });
    });
  });
}

/**
 * `.ci/run` sets BENCH_SMOKE_OFF=1 for its second runtime (Node 24): the benches are measured on the
 * machine's Node, and proving each still runs once is what this file is for; a second pass on the other
 * runtime doubled CI's time for no new fact. Nothing is registered then (a skipped test fails CI).
 */
const off = process.env.BENCH_SMOKE_OFF === "1";

if (!off)
  describe("benches in smoke mode (BENCH_SMOKE=1): each still runs", function () {
    /** Each bench's run, settled when the pool has run it. */
    const runs = new Map<string, Promise<Run>>();
    let started = 0;

    before(function () {
      expect(scripts.length, "bench scripts in package.json").to.be.greaterThan(10);
      const done = new Map<string, (run: Run) => void>();
      for (const name of scripts) runs.set(name, new Promise((resolve) => done.set(name, resolve)));
      // A pool of AT_ONCE: each run starts when one before it ends.
      const queue = [...scripts];
      const next = async (): Promise<void> => {
        for (let name = queue.shift(); name; name = queue.shift()) done.get(name)!(await smoke(name));
      };
      started = Date.now();
      for (let i = 0; i < AT_ONCE; i++) void next();
    });

    after(function () {
      console.log(`      all ${scripts.length} benches in ${((Date.now() - started) / 1000).toFixed(0)} s`);
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
