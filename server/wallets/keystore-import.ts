import { createDecipheriv, pbkdf2, scrypt, timingSafeEqual } from "node:crypto";
import { computeAddress, getAddress, isKeystoreJson, keccak256, SigningKey } from "ethers";
import { ApiError } from "../http/errors";

/**
 * The costliest key derivations geth and Foundry write: geth's "standard" scrypt (N = 2^18, r = 8,
 * p = 1: 256 MiB and about a second), and its "light" one's p (6, with N = 2^12). Keystores asking
 * for more memory, a larger p or more work in all are refused, not run.
 */
const MAX_SCRYPT_MEMORY = 128 * 2 ** 18 * 8;
const MAX_SCRYPT_P = 6;
/** Work is N · r · p blocks: the standard keystore's. */
const MAX_SCRYPT_WORK = 2 ** 18 * 8;
/** Node's check is approximate: headroom over what the parameters need. */
const SCRYPT_MAXMEM = MAX_SCRYPT_MEMORY + 32 * 1024 * 1024;
/** pbkdf2 keystores (rare: geth and Foundry write scrypt ones): geth's count at most. */
const MAX_PBKDF2_ROUNDS = 2 ** 18;

export interface KeystoreImportLimits {
  /** Derivations at once: each may take 256 MiB and a thread of libuv's pool for a second. */
  parallel: number;
  /** Imports waiting for a turn; past that, 429 RATE_LIMITED. */
  waiting: number;
}

export const DEFAULT_KEYSTORE_LIMITS: KeystoreImportLimits = { parallel: 1, waiting: 8 };

type Kdf =
  | { kdf: "scrypt"; salt: Buffer; N: number; r: number; p: number }
  | { kdf: "pbkdf2"; salt: Buffer; rounds: number; digest: "sha256" | "sha512" };

/** A Web3 Secret Storage v3 keystore, read and checked before anything is derived. */
interface Keystore {
  kdf: Kdf;
  iv: Buffer;
  ciphertext: Buffer;
  mac: Buffer;
  /** The address the keystore says it holds, if it says. */
  address?: string;
}

/**
 * Decrypts Web3 Secret Storage v3 keystores (geth, Foundry, ethers): the key derivation (scrypt or
 * pbkdf2) runs on libuv's thread pool through Node's crypto, never on the event loop, and a bounded
 * number at a time: an import is a deliberately slow derivation, and a burst of them must not
 * starve the requests around it. Errors never repeat a value of the keystore or the password.
 */
export class KeystoreImporter {
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly limits: KeystoreImportLimits = DEFAULT_KEYSTORE_LIMITS) {}

  /** The keystore's private key (32 bytes); 400 VALIDATION_ERROR for a wrong password or a keystore it cannot read. */
  async decrypt(keystore: Record<string, unknown>, password: string): Promise<Buffer> {
    const read = readKeystore(keystore);
    await this.turn();
    let derived: Buffer;
    try {
      derived = await derive(read.kdf, Buffer.from(password.normalize("NFKD"), "utf8"));
    } finally {
      this.running--;
      this.queue.shift()?.();
    }
    try {
      const mac = Buffer.from(keccak256(Buffer.concat([derived.subarray(16, 32), read.ciphertext])).slice(2), "hex");
      if (!timingSafeEqual(mac, read.mac)) throw invalid("password", "does not decrypt this keystore");
      const decipher = createDecipheriv("aes-128-ctr", derived.subarray(0, 16), read.iv);
      const key = Buffer.concat([decipher.update(read.ciphertext), decipher.final()]);
      if (read.address !== undefined && !holds(key, read.address)) {
        key.fill(0);
        throw invalid("keystore", "holds a key of another address than its own address field");
      }
      return key;
    } finally {
      derived.fill(0);
    }
  }

  private async turn(): Promise<void> {
    if (this.running < this.limits.parallel) {
      this.running++;
      return;
    }
    if (this.queue.length >= this.limits.waiting) {
      throw new ApiError("RATE_LIMITED", "Too many keystore imports under way; retry in a moment", undefined, {
        "Retry-After": "2",
      });
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
    this.running++;
  }
}

function derive(kdf: Kdf, password: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, key: Buffer) => (err ? reject(err) : resolve(key));
    if (kdf.kdf === "scrypt")
      scrypt(password, kdf.salt, 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: SCRYPT_MAXMEM }, done);
    else pbkdf2(password, kdf.salt, kdf.rounds, 32, kdf.digest, done);
  });
}

/** The keystore's parts, or 400 VALIDATION_ERROR naming the first that is missing, malformed or unsupported. */
function readKeystore(keystore: Record<string, unknown>): Keystore {
  if (!isKeystoreJson(JSON.stringify(keystore)))
    throw invalid("keystore", "is not a Web3 Secret Storage v3 keystore (version 3)");
  const crypto = field(keystore, "crypto");
  if (field(crypto, "cipher") !== "aes-128-ctr")
    throw invalid("keystore", "uses a cipher other than aes-128-ctr, the one Web3 Secret Storage v3 defines");
  const iv = hex(field(field(crypto, "cipherparams"), "iv"), "crypto.cipherparams.iv", 16);
  const ciphertext = hex(field(crypto, "ciphertext"), "crypto.ciphertext", 32);
  const mac = hex(field(crypto, "mac"), "crypto.mac", 32);
  const address = field(keystore, "address");
  return {
    kdf: readKdf(crypto),
    iv,
    ciphertext,
    mac,
    ...(typeof address === "string" && /^(0x)?[0-9a-fA-F]{40}$/.test(address)
      ? { address: getAddress(address.replace(/^(0x)?/, "0x").toLowerCase()) }
      : {}),
  };
}

function readKdf(crypto: unknown): Kdf {
  const kdf = String(field(crypto, "kdf") ?? "").toLowerCase();
  const params = field(crypto, "kdfparams");
  const integer = (name: string) => {
    const value = field(params, name);
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1)
      throw invalid("keystore", `crypto.kdfparams.${name} is not a positive integer`);
    return value;
  };
  if (integer("dklen") !== 32) throw invalid("keystore", "crypto.kdfparams.dklen is not 32");
  const salt = hex(field(params, "salt"), "crypto.kdfparams.salt");
  if (kdf === "scrypt") {
    const [N, r, p] = [integer("n"), integer("r"), integer("p")];
    if (N < 2 || (N & (N - 1)) !== 0) throw invalid("keystore", "crypto.kdfparams.n is not a power of 2");
    if (128 * N * r > MAX_SCRYPT_MEMORY || p > MAX_SCRYPT_P || N * r * p > MAX_SCRYPT_WORK)
      throw invalid(
        "keystore",
        "asks for scrypt parameters past what geth and Foundry write (n = 262144 with r = 8 and p = 1; p at most 6)",
      );
    return { kdf, salt, N, r, p };
  }
  if (kdf === "pbkdf2") {
    const prf = field(params, "prf");
    if (prf !== "hmac-sha256" && prf !== "hmac-sha512")
      throw invalid("keystore", "crypto.kdfparams.prf is not hmac-sha256 or hmac-sha512");
    const rounds = integer("c");
    if (rounds > MAX_PBKDF2_ROUNDS) throw invalid("keystore", "asks for more than 262144 pbkdf2 rounds");
    return { kdf, salt, rounds, digest: prf === "hmac-sha256" ? "sha256" : "sha512" };
  }
  throw invalid("keystore", "uses a key derivation other than scrypt or pbkdf2");
}

/** Whether `key` is the private key of `address`. */
function holds(key: Buffer, address: string): boolean {
  try {
    return computeAddress(new SigningKey(key).publicKey) === address;
  } catch {
    return false;
  }
}

/** Hex bytes (with or without 0x) of `length` bytes when given. */
function hex(value: unknown, name: string, length?: number): Buffer {
  const digits = typeof value === "string" ? value.replace(/^0x/i, "") : "";
  if (!/^([0-9a-fA-F]{2})+$/.test(digits) || (length !== undefined && digits.length !== 2 * length))
    throw invalid("keystore", `${name} is not ${length === undefined ? "" : `${length} bytes of `}hex`);
  return Buffer.from(digits, "hex");
}

/** A field of a keystore object, matched without case (geth once wrote "Crypto"). */
function field(value: unknown, name: string): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  const key = Object.keys(value).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : (value as Record<string, unknown>)[key];
}

function invalid(path: string, message: string): ApiError {
  return new ApiError("VALIDATION_ERROR", `${path} ${message}`, [{ path, message }]);
}
