import { makeMerkleTree } from "@openzeppelin/merkle-tree/dist/core";
import { keccak256 } from "js-sha3";

/** One allowlist entry: who may mint, how many in all, at what price per token (wei). */
export interface AllowlistEntry {
  /** 0x and 40 hex digits, in any case. */
  address: string;
  allowance: bigint;
  price: bigint;
}

/** The leaf types of every allowlist tree, as StandardMerkleTree.of takes them. */
export const LEAF_TYPES = ["address", "uint256", "uint256"] as const;

export interface AllowlistTree {
  root: string;
  /** Every node of the tree, 32 bytes each, in @openzeppelin/merkle-tree's array order (root first). */
  nodes: Buffer;
  /** The tree index of each entry's leaf, in the entries' order. */
  treeIndex: number[];
}

/** Each entry's leaf, 32 bytes apiece: keccak256(keccak256(abi.encode(address, allowance, price))), as StandardMerkleTree hashes it. */
function leafHashes(entries: AllowlistEntry[]): Buffer {
  const encoded = Buffer.alloc(96);
  const leaves = Buffer.alloc(entries.length * 32);
  entries.forEach(({ address, allowance, price }, i) => {
    encoded.fill(0, 0, 12);
    encoded.write(address.slice(2), 12, "hex");
    encoded.write(allowance.toString(16).padStart(64, "0"), 32, "hex");
    encoded.write(price.toString(16).padStart(64, "0"), 64, "hex");
    leaves.set(new Uint8Array(keccak256.arrayBuffer(keccak256.arrayBuffer(encoded))), i * 32);
  });
  return leaves;
}

/**
 * StandardMerkleTree's node: keccak256 of the two children, the smaller first. The library hands
 * them over as lower-case hex of one length, which compares as the bytes do.
 */
function nodeHash(left: unknown, right: unknown): string {
  const [a, b] = [(left as string).slice(2), (right as string).slice(2)];
  return `0x${keccak256(Buffer.from(a <= b ? a + b : b + a, "hex"))}`;
}

/**
 * The tree StandardMerkleTree.of(entries, ["address","uint256","uint256"]) builds, node for node
 * (test/drops/allowlist-tree.test.ts compares them): the library's own layout (makeMerkleTree),
 * with its leaves and nodes hashed by js-sha3. StandardMerkleTree.of itself took 21 s for 100,000
 * entries here, where this takes 2 to 4 (README, "Allowlist trees"): its ABI encoder builds four
 * Error objects (each with a stack trace) per uint256, its sort compares leaves through BigInt,
 * and its keccak is three times slower than js-sha3's.
 */
export function buildAllowlistTree(entries: AllowlistEntry[]): AllowlistTree {
  const leaves = leafHashes(entries);
  const leaf = (i: number) => leaves.subarray(i * 32, i * 32 + 32);
  // Sorted by hash, as StandardMerkleTree sorts its leaves (a 32-byte big-endian compare).
  const order = entries.map((_, i) => i).sort((i, j) => Buffer.compare(leaf(i), leaf(j)));
  const tree = makeMerkleTree(order.map(leaf), nodeHash);
  const treeIndex = new Array<number>(entries.length);
  order.forEach((entry, position) => (treeIndex[entry] = tree.length - 1 - position));
  return { root: tree[0], nodes: Buffer.from(tree.map((node) => node.slice(2)).join(""), "hex"), treeIndex };
}

/** The tree indices of the proof of the leaf at `treeIndex`: its sibling, then each ancestor's, up to the root. */
export function proofIndices(treeIndex: number): number[] {
  const indices: number[] = [];
  for (let i = treeIndex; i > 0; i = Math.floor((i - 1) / 2)) indices.push(i % 2 === 1 ? i + 1 : i - 1);
  return indices;
}
