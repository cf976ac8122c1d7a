import path from "node:path";
import { Worker } from "node:worker_threads";
import { buildAllowlistTree, type AllowlistEntry, type AllowlistTree } from "./allowlist-tree";

/** Below this many entries a tree is built in place: a worker's start costs more than the hashing. */
const IN_PLACE_ENTRIES = 5_000;

/**
 * Builds the tree on a worker thread for a large list: 100,000 entries hash for seconds, and the
 * service goes on answering (and reading its JSON-RPC answers, which time out) meanwhile.
 */
export function buildAllowlistTreeOffThread(entries: AllowlistEntry[]): Promise<AllowlistTree> {
  if (entries.length < IN_PLACE_ENTRIES) return Promise.resolve(buildAllowlistTree(entries));
  const file = path.join(__dirname, `allowlist-tree-worker${path.extname(__filename)}`);
  const rows = entries.map((e) => [e.address, e.allowance.toString(), e.price.toString()]);
  // From source (ts-node), the worker registers the same transpiler before it loads the module; the
  // built service (.js) never takes this branch, so its name is not spelt as a require of dist/.
  const transpiler = ["ts-node", "register", "transpile-only"].join("/");
  const worker = file.endsWith(".ts")
    ? new Worker(`require(${JSON.stringify(transpiler)}); require(${JSON.stringify(file)});`, {
        eval: true,
        workerData: rows,
      })
    : new Worker(file, { workerData: rows });
  return new Promise<AllowlistTree>((resolve, reject) => {
    worker.once("message", (tree: { root: string; nodes: Uint8Array; treeIndex: number[] }) => {
      resolve({
        root: tree.root,
        nodes: Buffer.from(tree.nodes.buffer, tree.nodes.byteOffset, tree.nodes.byteLength),
        treeIndex: tree.treeIndex,
      });
      void worker.terminate();
    });
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the allowlist tree worker exited with ${code}`));
    });
  });
}
