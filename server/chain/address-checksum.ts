import { keccak256 } from "js-sha3";

/**
 * EIP-55: whether the 40 hex digits `hex` (mixed-case; `lower` is the same in lower case) carry a
 * right checksum: a letter is upper-case where the keccak-256 of the lower-case hex has a nibble ≥ 8.
 * Written out with js-sha3 rather than through ethers' getAddress: lists of 100,000 addresses are
 * checked before an answer, and js-sha3 hashes a short string three times as fast as the hasher ethers uses.
 */
export function checksumMatches(hex: string, lower: string): boolean {
  const hash = keccak256(lower);
  for (let i = 0; i < 40; i++) {
    const c = hex.charCodeAt(i);
    if (c < 0x41) continue; // a digit
    const upper = c <= 0x46;
    if (upper !== parseInt(hash[i], 16) >= 8) return false;
  }
  return true;
}
