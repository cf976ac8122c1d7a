import { invert } from "@noble/curves/abstract/modular";
import { secp256k1 } from "@noble/curves/secp256k1";
import { Signature, toBeHex, toBigInt } from "ethers";
import { LRUCache } from "lru-cache";
import { Pkcs11SignerError } from "./errors";

/** CKA_EC_PARAMS of a secp256k1 key: the DER-encoded OID 1.3.132.0.10. */
export const SECP256K1_EC_PARAMS = Uint8Array.from([0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x0a]);

/** The order of secp256k1's group. */
export const SECP256K1_N = secp256k1.CURVE.n;
const HALF_N = SECP256K1_N >> 1n;

type Point = InstanceType<typeof secp256k1.ProjectivePoint>;
const { ProjectivePoint } = secp256k1;

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

// A public key's multiples, precomputed (noble's wNAF tables, window 4: ~20 ms and ~1.5 MiB once per
// key) make each recovery id about 4x cheaper than recovering addresses (bench:pkcs11). Bounded, so
// a service with many token keys keeps the tables of the ones in use.
const precomputed = new LRUCache<string, Point>({ max: 32 });

function publicPoint(publicKey: string): Point {
  let point = precomputed.get(publicKey);
  if (!point) {
    point = secp256k1.utils.precompute(4, ProjectivePoint.fromHex(publicKey.replace(/^0x/, "")));
    precomputed.set(publicKey, point);
  }
  return point;
}

/**
 * Turns a token's raw ECDSA signature (r || s, 32 bytes each) over a 32-byte `digest` into an
 * Ethereum one. A token signs with either s of the pair (s, n - s), while Ethereum accepts only the
 * low one (EIP-2); and it gives no recovery id, so v comes from the point R the signature stands
 * for: R = (z/s)·G + (r/s)·Q, v = 27 + parity of R's y. The same sum checks the signature against
 * `publicKey` (R's x must be r), so a public key that is not the private key's own is caught here.
 */
export function ethereumSignature(digest: Uint8Array, rs: Uint8Array, publicKey: string): Signature {
  if (rs.length !== 64) {
    throw new Pkcs11SignerError("SIGN_FAILED", `the token returned a ${rs.length}-byte ECDSA signature, not 64`);
  }
  const r = toBigInt(rs.subarray(0, 32));
  let s = toBigInt(rs.subarray(32));
  if (r <= 0n || r >= SECP256K1_N || s <= 0n || s >= SECP256K1_N) {
    throw new Pkcs11SignerError("SIGN_FAILED", "the token returned an ECDSA signature out of range");
  }
  if (s > HALF_N) s = SECP256K1_N - s;
  const sInverse = invert(s, SECP256K1_N);
  const u1 = (toBigInt(digest) * sInverse) % SECP256K1_N;
  const u2 = (r * sInverse) % SECP256K1_N;
  const gPart = u1 === 0n ? ProjectivePoint.ZERO : ProjectivePoint.BASE.multiply(u1);
  const sum = gPart.add(publicPoint(publicKey).multiply(u2));
  const R = sum.equals(ProjectivePoint.ZERO) ? undefined : sum.toAffine();
  if (!R || R.x !== r) {
    throw new Pkcs11SignerError(
      "SIGN_FAILED",
      "the token's signature does not verify against the key's public key: the public key found for this key is not its own",
    );
  }
  return Signature.from({ r: toBeHex(r, 32), s: toBeHex(s, 32), v: R.y & 1n ? 28 : 27 });
}
