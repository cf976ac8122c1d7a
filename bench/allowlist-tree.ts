/**
 * The allowlist tree of 100,000 entries: the service's build (server/drops/allowlist-tree.ts: the
 * library's layout, hashed by js-sha3) against @openzeppelin/merkle-tree's StandardMerkleTree.of,
 * in the same process, on the same entries, alternating, three runs of each: the same root, and
 * the time of each (medians). StandardMerkleTree.of is also timed with stack traces off, the
 * cheapest way the library's own code can run (its ABI encoder builds four Error objects per
 * uint256 value).
 *
 *   npx ts-node --transpile-only bench/allowlist-tree.ts      (npm run bench:allowlist-tree)
 *
 * Exits non-zero when a root differs, or when the service's build takes more than half the time
 * of StandardMerkleTree.of with stack traces off (the reason it exists).
 */
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { getAddress, hexlify, randomBytes } from "ethers";
import { buildAllowlistTree, LEAF_TYPES } from "../server/drops/allowlist-tree";
import { median } from "./median";
import { checked, sized } from "./smoke";

const ENTRIES = sized(100_000, 1_000);
const RUNS = sized(3, 1);
const MAX_RATIO = 0.5;

const entries = Array.from({ length: ENTRIES }, (_, i) => ({
  address: getAddress(hexlify(randomBytes(20))),
  allowance: BigInt(1 + (i % 5)),
  price: BigInt(i % 3) * 10n ** 15n,
}));
const values = entries.map((e) => [e.address, e.allowance.toString(), e.price.toString()]);

function timed(build: () => string): { ms: number; root: string } {
  const started = performance.now();
  const root = build();
  return { ms: performance.now() - started, root };
}

function withoutStackTraces<T>(run: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return run();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

const times = { service: [] as number[], library: [] as number[], libraryNoStacks: [] as number[] };
const roots = new Set<string>();
for (let run = 0; run < RUNS; run++) {
  const service = timed(() => buildAllowlistTree(entries).root);
  const library = timed(() => StandardMerkleTree.of(values, [...LEAF_TYPES]).root);
  const noStacks = timed(() => withoutStackTraces(() => StandardMerkleTree.of(values, [...LEAF_TYPES]).root));
  times.service.push(service.ms);
  times.library.push(library.ms);
  times.libraryNoStacks.push(noStacks.ms);
  for (const { root } of [service, library, noStacks]) roots.add(root);
}
const [service, library, noStacks] = [times.service, times.library, times.libraryNoStacks].map(median);
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`allowlist tree of ${ENTRIES.toLocaleString("en")} entries (median of ${RUNS}):`);
console.log(`  service (makeMerkleTree + js-sha3):        ${s(service)}`);
console.log(`  StandardMerkleTree.of:                     ${s(library)}`);
console.log(`  StandardMerkleTree.of, stack traces off:   ${s(noStacks)}`);
const ratio = service / noStacks;
const sameRoot = roots.size === 1;
console.log(`${sameRoot ? "PASS" : "FAIL"}: one root for all three (${[...roots].join(", ")})`);
console.log(
  `${ratio <= MAX_RATIO ? "PASS" : "FAIL"}: service = ${ratio.toFixed(3)}x StandardMerkleTree.of without stack traces (target <= ${MAX_RATIO}x); ${(service / library).toFixed(3)}x with them`,
);
// One root is checked in smoke mode too: it is not a figure.
if (!sameRoot) process.exitCode = 1;
else if (ratio > MAX_RATIO) process.exitCode = checked(1);
