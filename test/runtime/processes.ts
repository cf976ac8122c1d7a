/** What the operating system says about processes and ports, read from /proc and the network. */
import { readdirSync, readFileSync } from "node:fs";
import { connect } from "node:net";

interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
}

function stat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields that follow start after the last ")".
    const [state, ppid, pgrp] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, state, ppid: Number(ppid), pgrp: Number(pgrp) };
  } catch {
    return undefined; // gone meanwhile
  }
}

function allProcesses(): ProcStat[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => stat(Number(name)))
    .filter((s): s is ProcStat => s !== undefined && s.state !== "Z");
}

/** Live processes whose parent is `pid`. */
export function childrenOf(pid: number): number[] {
  return allProcesses()
    .filter((p) => p.ppid === pid)
    .map((p) => p.pid);
}

/**
 * Live processes of the process group `pgid`. The harness starts the service as the leader of its
 * own group, so anything it started and left behind is still in that group after it exits.
 */
export function processGroup(pgid: number): number[] {
  return allProcesses()
    .filter((p) => p.pgrp === pgid)
    .map((p) => p.pid);
}

/** Whether a TCP connection to 127.0.0.1:port is refused (nothing listens there). */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "ECONNREFUSED"));
  });
}

/**
 * Established TCP connections (IPv4 and IPv6) with `port` at either end, from /proc/net/tcp*:
 * the service reaching its own chain over HTTP would show up here. Throws when /proc/net/tcp cannot
 * be read, so that "no connection" is never a count that was not made; /proc/net/tcp6 is absent
 * only where IPv6 is off.
 */
export function establishedConnections(port: number): number {
  let count = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      if (file === "/proc/net/tcp6" && (err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new Error(`cannot count TCP connections: ${file}: ${(err as Error).message}`);
    }
    for (const line of text.trim().split("\n").slice(1)) {
      const [, local, remote, state] = line.trim().split(/\s+/);
      const portOf = (address: string) => parseInt(address.split(":")[1], 16);
      if (state === "01" && (portOf(local) === port || portOf(remote) === port)) count++;
    }
  }
  return count;
}

/** Polls `probe` every 50 ms until it holds, or fails after `timeoutMs`. */
export async function eventually(what: string, timeoutMs: number, probe: () => Promise<boolean> | boolean) {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
