import { encodeRlp, getBytes, hexlify, keccak256, toBeArray, type RlpStructuredData } from "ethers";

/**
 * The root of the ordered Merkle-Patricia trie of a block's transactions (the header's
 * `transactionsRoot`): key rlp(index), value the EIP-2718 bytes as signed. Hand-written rather
 * than @ethereumjs/mpt: a root over a list is 50 lines, and that package brings a second
 * @ethereumjs/util and rlp, debug and its own lru-cache for a database-backed trie never used here.
 */
export function transactionsRoot(rawTransactions: readonly string[]): string {
  if (rawTransactions.length === 0) return EMPTY_TRIE_ROOT;
  const entries = rawTransactions.map((raw, i) => ({ path: nibbles(getBytes(encodeRlp(indexKey(i)))), value: raw }));
  const root = node(entries, 0);
  return keccak256(encodeRlp(root));
}

/** keccak256(rlp("")): the root of a trie without entries. */
export const EMPTY_TRIE_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";

interface Entry {
  path: number[];
  value: string;
}

/** rlp(index) takes the index as a big-endian integer without leading zeros: 0 is the empty string. */
function indexKey(i: number): string {
  return i === 0 ? "0x" : hexlify(toBeArray(i));
}

function nibbles(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (const b of bytes) out.push(b >> 4, b & 15);
  return out;
}

/** The node holding `entries` (their paths from `depth` on), as the list RLP encodes. */
function node(entries: Entry[], depth: number): RlpStructuredData {
  if (entries.length === 1) return [hexPrefix(entries[0].path.slice(depth), true), entries[0].value];
  const shared = commonPrefix(entries, depth);
  if (shared > 0)
    return [hexPrefix(entries[0].path.slice(depth, depth + shared), false), ref(node(entries, depth + shared))];
  const branch: RlpStructuredData[] = Array.from({ length: 17 }, () => "0x");
  for (let n = 0; n < 16; n++) {
    const below = entries.filter((e) => e.path.length > depth && e.path[depth] === n);
    if (below.length > 0) branch[n] = ref(node(below, depth + 1));
  }
  // A key ending here would put its value in the branch; rlp(index) keys are prefix-free, so none does.
  const ending = entries.find((e) => e.path.length === depth);
  if (ending) branch[16] = ending.value;
  return branch;
}

/** How a parent refers to a child: the child itself when its encoding is under 32 bytes, else its hash. */
function ref(child: RlpStructuredData): RlpStructuredData {
  const encoded = encodeRlp(child);
  return getBytes(encoded).length < 32 ? child : keccak256(encoded);
}

function commonPrefix(entries: Entry[], depth: number): number {
  let n = 0;
  for (;;) {
    const at = depth + n;
    const first = entries[0].path[at];
    if (first === undefined || entries.some((e) => e.path[at] !== first)) return n;
    n++;
  }
}

/** Hex-prefix encoding of a path: a flag nibble (2 for a leaf, +1 for an odd length), padded to bytes. */
function hexPrefix(path: number[], leaf: boolean): string {
  const odd = path.length % 2 === 1;
  const flag = (leaf ? 2 : 0) + (odd ? 1 : 0);
  const all = odd ? [flag, ...path] : [flag, 0, ...path];
  const bytes = new Uint8Array(all.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (all[2 * i] << 4) | all[2 * i + 1];
  return hexlify(bytes);
}
