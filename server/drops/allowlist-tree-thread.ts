import { availableParallelism } from "node:os";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { ApiError } from "../http/errors";
import { buildAllowlistTree, type AllowlistEntry, type AllowlistTree } from "./allowlist-tree";

/** Below this many entries a tree is built in place: a worker's start costs more than the hashing. */
const IN_PLACE_ENTRIES = 5_000;
/** An idle worker is ended after this long: its memory is not kept for a PUT that may never come. */
const IDLE_MS = 30_000;
/** What a refused build tells the client to wait: about one 100,000-entry tree (2 to 4 s). */
const RETRY_AFTER_SECONDS = 5;

type TreeRows = [address: string, allowance: string, price: string][];
type WireTree = { root: string; nodes: Uint8Array; treeIndex: number[] };

export interface TreePoolLimits {
  /** Worker threads at most: one per core, no more. */
  workers: number;
  /** Builds waiting for a worker at most; one more is refused with 503 SERVICE_BUSY and Retry-After. */
  queue: number;
}

/** One worker per core (2 here), and twice as many builds waiting. */
export function defaultTreePoolLimits(cpus = availableParallelism()): TreePoolLimits {
  const workers = Math.max(1, cpus);
  return { workers, queue: 2 * workers };
}

interface Task {
  rows: TreeRows;
  resolve(tree: AllowlistTree): void;
  reject(err: unknown): void;
}

interface PoolWorker {
  worker: Worker;
  task?: Task;
  idle?: NodeJS.Timeout;
}

/**
 * Builds allowlist trees on a bounded pool of worker threads: 100,000 entries hash for seconds, and
 * the service goes on answering (and reading its JSON-RPC answers, which time out) meanwhile. A
 * thread per request had no bound: a burst of PUTs started a thread (and a tree's memory) each.
 * Workers start on demand, are reused, and end when idle.
 */
export class AllowlistTreePool {
  private readonly workers: PoolWorker[] = [];
  private readonly waiting: Task[] = [];

  constructor(readonly limits: TreePoolLimits = defaultTreePoolLimits()) {
    if (limits.workers < 1 || limits.queue < 0)
      throw new RangeError("AllowlistTreePool needs workers >= 1, queue >= 0");
  }

  /** Worker threads alive now. */
  get size(): number {
    return this.workers.length;
  }

  /** Builds waiting for a worker now. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * The tree of `entries`: in place for a small list, else on a worker. Every worker busy and the
   * queue full: 503 SERVICE_BUSY with Retry-After, at once (nothing was hashed).
   */
  build(entries: AllowlistEntry[]): Promise<AllowlistTree> {
    if (entries.length < IN_PLACE_ENTRIES) return Promise.resolve(buildAllowlistTree(entries));
    const free = this.workers.find((w) => !w.task);
    if (!free && this.workers.length >= this.limits.workers && this.waiting.length >= this.limits.queue) {
      return Promise.reject(
        new ApiError(
          "SERVICE_BUSY",
          `Every allowlist tree worker is busy and ${this.waiting.length} lists wait: retry in ${RETRY_AFTER_SECONDS} s`,
          undefined,
          { "Retry-After": String(RETRY_AFTER_SECONDS) },
        ),
      );
    }
    const rows: TreeRows = entries.map((e) => [e.address, e.allowance.toString(), e.price.toString()]);
    return new Promise<AllowlistTree>((resolve, reject) => {
      this.waiting.push({ rows, resolve, reject });
      this.dispatch();
    });
  }

  /** Ends every worker; builds in flight or waiting reject. */
  async close(): Promise<void> {
    for (const task of this.waiting.splice(0)) task.reject(new Error("the allowlist tree pool was closed"));
    await Promise.all(this.workers.splice(0).map((w) => this.end(w)));
  }

  private dispatch(): void {
    while (this.waiting.length > 0) {
      let slot = this.workers.find((w) => !w.task);
      if (!slot && this.workers.length < this.limits.workers) slot = this.spawn();
      if (!slot) return;
      const task = this.waiting.shift()!;
      clearTimeout(slot.idle);
      slot.task = task;
      slot.worker.postMessage(task.rows);
    }
  }

  private spawn(): PoolWorker {
    const file = path.join(__dirname, `allowlist-tree-worker${path.extname(__filename)}`);
    // From source (ts-node), the worker registers the same transpiler before it loads the module; the
    // built service (.js) never takes this branch, so its name is not spelt as a require of dist/.
    const transpiler = ["ts-node", "register", "transpile-only"].join("/");
    const worker = file.endsWith(".ts")
      ? new Worker(`require(${JSON.stringify(transpiler)}); require(${JSON.stringify(file)});`, { eval: true })
      : new Worker(file);
    worker.unref(); // an idle pool never keeps the process alive
    const slot: PoolWorker = { worker };
    worker.on("message", (tree: WireTree) => {
      const task = slot.task;
      slot.task = undefined;
      task?.resolve({
        root: tree.root,
        nodes: Buffer.from(tree.nodes.buffer, tree.nodes.byteOffset, tree.nodes.byteLength),
        treeIndex: tree.treeIndex,
      });
      slot.idle = setTimeout(() => void this.retire(slot), IDLE_MS).unref();
      this.dispatch();
    });
    const failed = (err: unknown) => {
      const task = slot.task;
      slot.task = undefined;
      this.remove(slot);
      task?.reject(err);
      this.dispatch();
    };
    worker.once("error", failed);
    worker.once("exit", (code) => failed(new Error(`the allowlist tree worker exited with ${code}`)));
    this.workers.push(slot);
    return slot;
  }

  private async retire(slot: PoolWorker): Promise<void> {
    if (slot.task) return;
    this.remove(slot);
    await this.end(slot);
  }

  private remove(slot: PoolWorker): void {
    const at = this.workers.indexOf(slot);
    if (at >= 0) this.workers.splice(at, 1);
  }

  private async end(slot: PoolWorker): Promise<void> {
    clearTimeout(slot.idle);
    slot.worker.removeAllListeners("exit");
    await slot.worker.terminate();
  }
}

/** The process's pool: every allowlist PUT builds its tree here. */
export const allowlistTrees = new AllowlistTreePool();
