/**
 * Ports for what the tests start (services, nodes, PostgreSQL, a port that must refuse), unique
 * across every process of a run. A port the kernel hands out (listen on 0) is free now, but between
 * its close and a child's listen another process may take it: with the suite's parts, two runtimes
 * and the benches side by side, a service's /health probe reached another test's webhook receiver,
 * and a bench talked to another test's service.
 *
 * So each process takes a slot of 1,000 ports below the kernel's ephemeral range (32768 and up on
 * Linux, where every listen on 0 and every outgoing connection gets its port): a file
 * `<tmpdir>/nft-ops-test-ports/slot-N` made exclusively, holding its pid, removed at exit (a slot
 * whose process is gone is taken over). Its ports are handed out in turn, each checked free.
 */
import { mkdirSync, readFileSync, rmdirSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

const FIRST_PORT = 10_000;
const SLOT_SIZE = 1_000;
const SLOTS = 22; // 10000 to 31999
const DIR = path.join(tmpdir(), "nft-ops-test-ports");

let slot: number | undefined;
let next = 0;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the slot file names a live process. A file removed meanwhile names none; an empty one is
 * a claim whose pid is being written (made with "wx", then written), so it is held.
 */
function held(file: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch {
    return false;
  }
  const holder = Number(text);
  return text === "" || (Number.isInteger(holder) && holder > 0 && alive(holder));
}

function takeSlot(): number {
  mkdirSync(DIR, { recursive: true });
  for (let n = 0; n < SLOTS; n++) {
    const file = path.join(DIR, `slot-${n}`);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(file, String(process.pid), { flag: "wx" });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        if (held(file)) break; // the next slot
        // Left by a process that is gone (killed before its exit handler ran): taken over under a lock,
        // and read again there, so that two processes that both saw it stale (the parts start together)
        // cannot each remove the other's fresh claim and both hold the slot.
        const lock = `${file}.takeover`;
        try {
          mkdirSync(lock);
        } catch {
          break; // another process is taking it over: the next slot
        }
        try {
          if (held(file)) break;
          unlinkSync(file);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err; // gone already: claim it
        } finally {
          rmdirSync(lock);
        }
        continue;
      }
      process.once("exit", () => {
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      });
      return n;
    }
  }
  throw new Error(`no free port slot in ${DIR}: ${SLOTS} processes hold one`);
}

function listensFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * Ports that fetch() refuses to reach ("bad port", the Fetch standard's list) within 10000 to 31999:
 * a service given one never answers the tests' /health probes.
 */
const FETCH_BAD_PORTS = new Set([10080]);

/** A port nothing listens on right now, which no other process of the run will be given. */
export async function freePort(): Promise<number> {
  slot ??= takeSlot();
  for (let tries = 0; tries < SLOT_SIZE; tries++) {
    const port = FIRST_PORT + slot * SLOT_SIZE + (next++ % SLOT_SIZE);
    if (!FETCH_BAD_PORTS.has(port) && (await listensFree(port))) return port;
  }
  throw new Error(`no free port in slot ${slot} (${FIRST_PORT + slot * SLOT_SIZE} and up)`);
}
