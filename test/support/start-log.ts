/**
 * What the suite's child processes cost (issue 54's figures), when TEST_START_LOG names a file: one
 * JSON line per child process group (a service, a `hardhat node`, a deploy script, a bench's smoke
 * run) with its kind, the test file that started it, its wall time and its CPU-seconds, and one per
 * mocha process with its own CPU (its in-process chains and stores). `npm run test:starts FILE`
 * sums them by kind. Unset (the default), nothing is watched.
 *
 * CPU is read from /proc: the utime and stime of every live process of the child's group plus what
 * each has reaped (cutime, cstime), sampled each second and once more just before the group is
 * killed. A group that ends on its own loses at most its last second.
 */
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import type { ChildProcess } from "node:child_process";
import path from "node:path";

const LOG = process.env.TEST_START_LOG;
const TICKS_PER_SECOND = 100; // CLK_TCK on Linux
const SAMPLE_MS = 1_000;

export type ChildKind = "service" | "hardhat node" | "anvil node" | "hardhat script" | "bench smoke" | "other";

interface Watched {
  kind: ChildKind;
  file: string;
  started: number;
  ticks: number;
  done: boolean;
}

const watched = new Map<number, Watched>();
let timer: NodeJS.Timeout | undefined;

/** Starts watching `child`'s process group, when TEST_START_LOG is set; `label` names it instead of its test file. */
export function trackChild(kind: ChildKind, child: ChildProcess, label?: string): void {
  if (!LOG || child.pid === undefined) return;
  const pgid = child.pid;
  watched.set(pgid, { kind, file: label ?? callerTestFile(), started: Date.now(), ticks: 0, done: false });
  child.once("exit", () => finish(pgid));
  timer ??= setInterval(sampleAll, SAMPLE_MS).unref();
}

/** Takes a last sample of `child`'s group: call it just before the group is killed. */
export function beforeKill(child: ChildProcess): void {
  const entry = child.pid === undefined ? undefined : watched.get(child.pid);
  if (entry && !entry.done) entry.ticks = Math.max(entry.ticks, groupTicks(child.pid!));
}

function finish(pgid: number): void {
  const entry = watched.get(pgid);
  if (!entry || entry.done) return;
  entry.done = true;
  watched.delete(pgid);
  write({
    kind: entry.kind,
    file: entry.file,
    wallSeconds: (Date.now() - entry.started) / 1000,
    cpuSeconds: entry.ticks / TICKS_PER_SECOND,
  });
}

function sampleAll(): void {
  if (watched.size === 0) return;
  const totals = ticksByGroup();
  for (const [pgid, entry] of watched) entry.ticks = Math.max(entry.ticks, totals.get(pgid) ?? 0);
}

function groupTicks(pgid: number): number {
  return ticksByGroup().get(pgid) ?? 0;
}

/** utime + stime + cutime + cstime of every live process, summed by process group. */
function ticksByGroup(): Map<number, number> {
  const totals = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone since the listing
    }
    // Fields after the command (which may hold spaces), from field 3 (state) on.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pgrp = Number(fields[2]);
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    totals.set(pgrp, (totals.get(pgrp) ?? 0) + ticks);
  }
  return totals;
}

/** The test file whose code is starting a child: the first *.test.ts frame of the stack. */
function callerTestFile(): string {
  const frame = new Error().stack?.split("\n").find((line) => /\.test\.ts:\d+/.test(line));
  const match = frame && /([^\s(]+\.test\.ts)/.exec(frame);
  return match ? path.relative(path.resolve(__dirname, "..", ".."), match[1]) : "(a shared fixture)";
}

function write(line: Record<string, unknown>): void {
  appendFileSync(LOG!, JSON.stringify({ node: process.version, ...line }) + "\n");
}

// Only in a `hardhat test` process: benches import the harness too, and their groups are counted whole.
if (LOG && process.argv.includes("test")) {
  process.once("exit", () => {
    const usage = process.resourceUsage();
    write({
      kind: "mocha",
      file: "(the mocha process)",
      wallSeconds: process.uptime(),
      cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
    });
  });
}
