import type { BytesLike } from "@openzeppelin/merkle-tree/dist/bytes";
import { makeMerkleTree } from "@openzeppelin/merkle-tree/dist/core";
import { keccak256 } from "ethers";

/** One allowlist entry: who may mint, how many in all, at what price per token (wei). */
export interface AllowlistEntry {
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

const word = (value: bigint) => Buffer.from(value.toString(16).padStart(64, "0"), "hex");
const bytes = (hex: string) => Buffer.from(hex.slice(2), "hex");

/** StandardMerkleTree's leaf: keccak256(keccak256(abi.encode(address, allowance, price))). */
function leafHash({ address, allowance, price }: AllowlistEntry): Buffer {
  const encoded = Buffer.concat([Buffer.alloc(12), bytes(address), word(allowance), word(price)]);
  return bytes(keccak256(bytes(keccak256(encoded))));
}

/** A node as the library hands it over: hex (what its tree holds), or bytes. */
const nodeBytes = (node: BytesLike) => (typeof node === "string" ? bytes(node) : Buffer.from(node));

/** StandardMerkleTree's node: keccak256 of the two children, the smaller first. */
function nodeHash(left: BytesLike, right: BytesLike): string {
  const a = nodeBytes(left);
  const b = nodeBytes(right);
  return keccak256(Buffer.compare(a, b) <= 0 ? Buffer.concat([a, b]) : Buffer.concat([b, a]));
}

/**
 * The tree StandardMerkleTree.of(entries, ["address","uint256","uint256"]) builds, node for node
 * (test/drops/allowlist-tree.test.ts compares them): the library's own layout (makeMerkleTree),
 * with its leaf and node hashes computed on buffers. The library's hashing validates hex and
 * compares through BigInt at every step; at 100,000 entries that took 17 s of the PUT's 10.
 */
export function buildAllowlistTree(entries: AllowlistEntry[]): AllowlistTree {
  const leaves = entries.map(leafHash);
  // Sorted by hash, as StandardMerkleTree sorts its leaves (a 32-byte big-endian compare).
  const order = leaves.map((_, i) => i).sort((i, j) => Buffer.compare(leaves[i], leaves[j]));
  const tree = makeMerkleTree(
    order.map((i) => leaves[i]),
    nodeHash,
  );
  const treeIndex = new Array<number>(entries.length);
  order.forEach((entry, position) => (treeIndex[entry] = tree.length - 1 - position));
  return { root: tree[0], nodes: Buffer.concat(tree.map(bytes)), treeIndex };
}

/** The tree indices of the proof of the leaf at `treeIndex`: its sibling, then each ancestor's, up to the root. */
export function proofIndices(treeIndex: number): number[] {
  const indices: number[] = [];
  for (let i = treeIndex; i > 0; i = Math.floor((i - 1) / 2)) indices.push(i % 2 === 1 ? i + 1 : i - 1);
  return indices;
}
