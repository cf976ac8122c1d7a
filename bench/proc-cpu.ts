/**
 * CPU time (and memory) from Linux's /proc, for benches that show where a figure's CPU went. Each answers
 * undefined where /proc cannot be read (another OS, a process gone meanwhile).
 */
import { readFileSync } from "node:fs";

/** /proc counts in USER_HZ ticks, 100 per second on Linux. */
const MS_PER_TICK = 10;

/** A process's group and the CPU it used so far (ms, user and system, all its threads). */
export function processCpu(pid: number | string): { pgrp: number; ms: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // After "pid (comm) ": state, ppid, pgrp, … utime and stime are fields 14 and 15 of the line.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgrp: Number(fields[2]), ms: (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK };
}

/** The machine's busy time so far (ms, all cores): everything but idle and iowait. */
export function machineBusyMs(): number | undefined {
  let line: string;
  try {
    line = readFileSync("/proc/stat", "utf8").split("\n")[0];
  } catch {
    return undefined;
  }
  // cpu user nice system idle iowait irq softirq steal
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * MS_PER_TICK;
}

/** A process's resident set (MB), from /proc; NaN where it cannot be read. */
export function processRssMb(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : NaN;
  } catch {
    return NaN;
  }
}
