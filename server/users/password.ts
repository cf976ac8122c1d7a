import { scrypt, timingSafeEqual } from "node:crypto";
import { Algorithm, hash as argon2Hash, verify as argon2Verify } from "@node-rs/argon2";
import { HashScheduler, type HashLane } from "./hash-scheduler";

export interface Argon2Params {
  /** Memory in KiB. */
  memoryCost: number;
  /** Passes over the memory. */
  timeCost: number;
  parallelism: number;
}

/**
 * argon2id with m=19 MiB, t=2, p=1: the first of the minimum configurations the OWASP Password
 * Storage Cheat Sheet lists (all equally strong), ~35 ms per hash on one core here. The smallest
 * memory of that list keeps concurrent hashes cheap (two at a time: 38 MiB). The params are
 * stored in every hash, and a login on a hash made with other params (or with scrypt) rehashes.
 */
export const DEFAULT_ARGON2_PARAMS: Argon2Params = { memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 };

/** Hashes with a fresh random salt, as a PHC string `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>`. */
export function hashPassword(password: string, params: Argon2Params = DEFAULT_ARGON2_PARAMS): Promise<string> {
  return argon2Hash(normalize(password), { algorithm: Algorithm.Argon2id, ...params });
}

/**
 * Checks `password` against an argon2id hash, or a legacy `scrypt$N$r$p$salt$key` one (made
 * before argon2id; upgraded at the next successful login). False (never a throw) for a
 * malformed hash.
 */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  if (encoded.startsWith("$argon2id$")) {
    if (!parseArgon2Params(encoded)) return false;
    return argon2Verify(encoded, normalize(password)).catch(() => false);
  }
  const legacy = parseScryptHash(encoded);
  if (!legacy) return false;
  const key = await scryptKey(normalize(password), legacy.salt, legacy.key.length, legacy.params);
  return timingSafeEqual(key, legacy.key);
}

/** True when `encoded` is not argon2id with exactly `params`: rehash it at the next login. */
export function needsRehash(encoded: string, params: Argon2Params = DEFAULT_ARGON2_PARAMS): boolean {
  const stored = parseArgon2Params(encoded);
  return (
    !stored ||
    stored.memoryCost !== params.memoryCost ||
    stored.timeCost !== params.timeCost ||
    stored.parallelism !== params.parallelism
  );
}

/** Hashing and verifying through a HashScheduler, so logins go first and batches never take every slot. */
export class PasswordHasher {
  constructor(
    readonly params: Argon2Params = DEFAULT_ARGON2_PARAMS,
    readonly scheduler: HashScheduler = new HashScheduler(),
  ) {}

  hash(password: string, lane: Exclude<HashLane, "login">, signal?: AbortSignal): Promise<string> {
    return this.scheduler.run(lane, () => hashPassword(password, this.params), signal);
  }

  /** A login's check, and its rehash when `needsRehash`: both in the login lane. */
  verify(password: string, encoded: string): Promise<boolean> {
    return this.scheduler.run("login", () => verifyPassword(password, encoded));
  }

  rehash(password: string): Promise<string> {
    return this.scheduler.run("login", () => hashPassword(password, this.params));
  }

  needsRehash(encoded: string): boolean {
    return needsRehash(encoded, this.params);
  }
}

/** NFC, so the same password typed on different systems hashes the same. */
function normalize(password: string): string {
  return password.normalize("NFC");
}

/** The params of an argon2id hash, within bounds that keep a corrupt or hostile row from asking for gigabytes. */
function parseArgon2Params(encoded: string): Argon2Params | null {
  const match = /^\$argon2id\$v=19\$m=(\d{1,8}),t=(\d{1,3}),p=(\d{1,3})\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(encoded);
  if (!match) return null;
  const [memoryCost, timeCost, parallelism] = match.slice(1).map(Number);
  const sane = memoryCost >= 8 && memoryCost <= 1024 * 1024 && timeCost >= 1 && timeCost <= 64 && parallelism >= 1;
  return sane && parallelism <= 16 ? { memoryCost, timeCost, parallelism } : null;
}

interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

function parseScryptHash(encoded: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const parts = encoded.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const sane = Number.isInteger(Math.log2(N)) && N >= 2 && N <= 2 ** 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16;
  const salt = Buffer.from(parts[4], "base64");
  const key = Buffer.from(parts[5], "base64");
  if (!sane || !Number.isInteger(r) || !Number.isInteger(p) || salt.length === 0 || key.length < 16) return null;
  return { params: { N, r, p }, salt, key };
}

function scryptKey(password: string, salt: Buffer, length: number, { N, r, p }: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(Buffer.from(password, "utf8"), salt, length, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}
