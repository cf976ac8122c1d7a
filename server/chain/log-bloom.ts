import { getBytes, keccak256 } from "ethers";

/**
 * Whether a block's 2048-bit log bloom may hold a log emitted by `address` (the Yellow Paper's
 * M3:2048: three bits, from the first three pairs of bytes of the keccak of the address). False
 * is certain: no log of that address is in the block. True may be a false positive.
 */
export function bloomMayHold(logsBloom: string, address: string): boolean {
  const bloom = getBytes(logsBloom);
  if (bloom.length !== 256) return true; // not a bloom we can read: assume it may
  const hash = getBytes(keccak256(address));
  for (let i = 0; i < 6; i += 2) {
    const bit = ((hash[i] << 8) | hash[i + 1]) & 2047;
    if ((bloom[255 - (bit >> 3)] & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}
