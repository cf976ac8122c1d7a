import { getBytes, recoverAddress, Signature, toBeHex, toBigInt, type BytesLike } from "ethers";
import { Pkcs11SignerError } from "./errors";

/** CKA_EC_PARAMS of a secp256k1 key: the DER-encoded OID 1.3.132.0.10. */
export const SECP256K1_EC_PARAMS = Uint8Array.from([0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a]);

/** The order of secp256k1's group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N >> 1n;

/**
 * The 65-byte uncompressed point (0x04 || x || y) of a CKA_EC_POINT. PKCS#11 says the value is a DER
 * OCTET STRING wrapping the point; some tokens return the bare point, which is accepted too.
 */
export function uncompressedPoint(ecPoint: Uint8Array): Uint8Array {
  if (ecPoint.length === 67 && ecPoint[0] === 0x04 && ecPoint[1] === 0x41 && ecPoint[2] === 0x04) {
    return ecPoint.subarray(2);
  }
  if (ecPoint.length === 65 && ecPoint[0] === 0x04) return ecPoint;
  throw new Pkcs11SignerError(
    "KEY_UNSUPPORTED",
    `the token's public key is not an uncompressed secp256k1 point (CKA_EC_POINT of ${ecPoint.length} bytes)`,
  );
}

/**
 * Turns a token's raw ECDSA signature (r || s, 32 bytes each) over `digest` into an Ethereum one.
 * A token signs with either s of the pair (s, n - s), while Ethereum accepts only the low one
 * (EIP-2), and it gives no recovery id: the right v is the one that recovers `address`.
 */
export function ethereumSignature(digest: BytesLike, rs: Uint8Array, address: string): Signature {
  if (rs.length !== 64) {
    throw new Pkcs11SignerError("SIGN_FAILED", `the token returned a ${rs.length}-byte ECDSA signature, not 64`);
  }
  const r = toBeHex(toBigInt(rs.subarray(0, 32)), 32);
  let s = toBigInt(rs.subarray(32));
  if (s > HALF_N) s = SECP256K1_N - s;
  const lowS = toBeHex(s, 32);
  const hash = getBytes(digest);
  for (const v of [27, 28] as const) {
    const signature = Signature.from({ r, s: lowS, v });
    if (recoverAddress(hash, signature) === address) return signature;
  }
  throw new Pkcs11SignerError(
    "SIGN_FAILED",
    `the token's signature does not recover to ${address}: the public key found for this key is not its own`,
  );
}
