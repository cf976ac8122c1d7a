import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/**
 * N=2^14, r=8, p=1: 16 MiB and ~40 ms per hash on one core here — the scrypt paper's setting
 * for interactive logins (< 100 ms) and Node's own default. Memory-hardness is what makes
 * GPU/ASIC guessing costly; 16 MiB keeps four concurrent hashes (libuv's pool) at 64 MiB.
 * OWASP's stronger equivalent is N=2^14, r=8, p=5 (5x CPU, same memory): the params are stored
 * in every hash, and a login with old params rehashes, so raising them is a config change.
 */
export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { N: 2 ** 14, r: 8, p: 1 };

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const PREFIX = "scrypt";

/** Hashes with a fresh random salt. Encoded as `scrypt$N$r$p$<salt b64>$<key b64>`. */
export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, params);
  return [PREFIX, params.N, params.r, params.p, salt.toString("base64"), key.toString("base64")].join("$");
}

/** Constant-time comparison of the derived key; false (never a throw) for a malformed hash. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parseHash(encoded);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.key.length, parsed.params);
  return timingSafeEqual(key, parsed.key);
}

/** True when `encoded` was made with other params than `params` (rehash it at the next login). */
export function needsRehash(encoded: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): boolean {
  const parsed = parseHash(encoded);
  return !parsed || parsed.params.N !== params.N || parsed.params.r !== params.r || parsed.params.p !== params.p;
}

function parseHash(encoded: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const parts = encoded.split("$");
  if (parts.length !== 6 || parts[0] !== PREFIX) return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  // Bounds keep a corrupt or hostile row from asking for gigabytes of memory.
  const sane = Number.isInteger(Math.log2(N)) && N >= 2 && N <= 2 ** 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16;
  const salt = Buffer.from(parts[4], "base64");
  const key = Buffer.from(parts[5], "base64");
  if (!sane || !Number.isInteger(r) || !Number.isInteger(p) || salt.length === 0 || key.length < 16) return null;
  return { params: { N, r, p }, salt, key };
}

function derive(password: string, salt: Buffer, length: number, { N, r, p }: ScryptParams): Promise<Buffer> {
  // NFC so the same password typed on different systems hashes the same.
  const secret = Buffer.from(password.normalize("NFC"), "utf8");
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, length, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}
