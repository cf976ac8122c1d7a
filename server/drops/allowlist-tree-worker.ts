/** Worker thread of the allowlist tree pool (allowlist-tree-thread.ts): builds each tree it is sent and posts it back. */
import { parentPort } from "node:worker_threads";
import { buildAllowlistTree } from "./allowlist-tree";

parentPort!.on("message", (rows: [string, string, string][]) => {
  const tree = buildAllowlistTree(
    rows.map(([address, allowance, price]) => ({ address, allowance: BigInt(allowance), price: BigInt(price) })),
  );
  parentPort!.postMessage(tree);
});
