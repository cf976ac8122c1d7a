/** Worker thread: builds one allowlist tree (allowlist-tree-thread.ts starts it) and posts it back. */
import { parentPort, workerData } from "node:worker_threads";
import { buildAllowlistTree } from "./allowlist-tree";

const rows = workerData as [string, string, string][];
const tree = buildAllowlistTree(
  rows.map(([address, allowance, price]) => ({ address, allowance: BigInt(allowance), price: BigInt(price) })),
);
parentPort!.postMessage(tree);
