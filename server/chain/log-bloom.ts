import { getBytes, keccak256 } from "ethers";

/** The three bloom bits of each address or topic asked about: a keccak per item, not per block. */
const bitsOf = new Map<string, readonly number[]>();
const MAX_ITEMS = 10_000;
const BLOOM_HEX = /^0x[0-9a-fA-F]{512}$/;

/**
 * Whether a block's 2048-bit log bloom may hold a log emitted by `address` (the Yellow Paper's
 * M3:2048: three bits, from the first three pairs of bytes of the keccak of the address). False
 * is certain: no log of that address is in the block. True may be a false positive.
 *
 * Asked of every header a kept view or the index looks at, for the same few items: the item's
 * bits are computed once, and only the three bytes that hold them are read from the hex string.
 */
export function bloomMayHold(logsBloom: string, address: string): boolean {
  if (logsBloom.length !== 514 || !BLOOM_HEX.test(logsBloom)) return true; // not a bloom we can read: assume it may
  for (const bit of bloomBits(address)) {
    const byte = 255 - (bit >> 3);
    if ((parseInt(logsBloom.slice(2 + 2 * byte, 4 + 2 * byte), 16) & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}

function bloomBits(item: string): readonly number[] {
  const key = item.toLowerCase();
  let bits = bitsOf.get(key);
  if (bits) return bits;
  const hash = getBytes(keccak256(item));
  bits = [0, 2, 4].map((i) => ((hash[i] << 8) | hash[i + 1]) & 2047);
  if (bitsOf.size >= MAX_ITEMS) bitsOf.delete(bitsOf.keys().next().value!);
  bitsOf.set(key, bits);
  return bits;
}
