import { scrypt as nodeScrypt } from "node:crypto";
import { isError, isKeystoreJson, scrypt as ethersScrypt, Wallet } from "ethers";
import { ApiError } from "../http/errors";

/**
 * scrypt's memory is 128 × N × r bytes: up to N = 2^18, r = 8 (geth's "standard" keystores, the
 * costliest common ones) that is 256 MiB. Keystores asking for more are refused, not run.
 */
const MAX_SCRYPT_MEMORY = 128 * 2 ** 18 * 8;
/** Node's check is approximate: headroom over what the parameters need. */
const SCRYPT_MAXMEM = MAX_SCRYPT_MEMORY + 32 * 1024 * 1024;
/**
 * pbkdf2 keystores (rare: geth and Foundry write scrypt ones) derive through ethers' pbkdf2, which is
 * synchronous in Node: bounded to geth's count (2^18, some 150 ms) so one import cannot hold the event loop long.
 */
const MAX_PBKDF2_ROUNDS = 2 ** 18;

export interface KeystoreImportLimits {
  /** Derivations at once: each may take 256 MiB and a thread of libuv's pool for a second. */
  parallel: number;
  /** Imports waiting for a turn; past that, 429 RATE_LIMITED. */
  waiting: number;
}

export const DEFAULT_KEYSTORE_LIMITS: KeystoreImportLimits = { parallel: 1, waiting: 8 };

let nativeScrypt = false;

/**
 * Makes ethers derive keystore keys with Node's scrypt, which runs on libuv's thread pool, instead
 * of its own JavaScript scrypt, which runs on the event loop (seconds of it for a standard keystore).
 */
function useNativeScrypt(): void {
  if (nativeScrypt) return;
  nativeScrypt = true;
  ethersScrypt.register(
    (password, salt, N, r, p, dkLen) =>
      new Promise((resolve, reject) =>
        nodeScrypt(password, salt, dkLen, { N, r, p, maxmem: SCRYPT_MAXMEM }, (err, key) =>
          err ? reject(err) : resolve(key),
        ),
      ),
  );
}

/**
 * Decrypts Web3 Secret Storage v3 keystores (geth, Foundry, ethers) with ethers'
 * Wallet.fromEncryptedJson, off the event loop and a bounded number at a time: a keystore import
 * is a deliberately slow key derivation, and a burst of them must not starve the requests around it.
 */
export class KeystoreImporter {
  private running = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly limits: KeystoreImportLimits = DEFAULT_KEYSTORE_LIMITS) {
    useNativeScrypt();
  }

  /** The keystore's private key (32 bytes); 400 VALIDATION_ERROR for a wrong password or a keystore it cannot read. */
  async decrypt(keystore: Record<string, unknown>, password: string): Promise<Buffer> {
    const json = JSON.stringify(keystore);
    if (!isKeystoreJson(json)) throw invalid("keystore", "is not a Web3 Secret Storage v3 keystore (version 3)");
    refuseCostlyKdf(keystore);
    await this.turn();
    try {
      const wallet = await Wallet.fromEncryptedJson(json, password);
      return Buffer.from(wallet.privateKey.slice(2), "hex");
    } catch (err) {
      if (isError(err, "INVALID_ARGUMENT") && err.argument === "password")
        throw invalid("password", "does not decrypt this keystore");
      if (isError(err, "INVALID_ARGUMENT")) throw invalid("keystore", `cannot be read (${err.shortMessage})`);
      throw err;
    } finally {
      this.running--;
      this.queue.shift()?.();
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

function refuseCostlyKdf(keystore: Record<string, unknown>): void {
  const crypto = field(keystore, "crypto");
  const kdf = String(field(crypto, "kdf") ?? "").toLowerCase();
  const params = field(crypto, "kdfparams");
  const number = (name: string) => Number(field(params, name));
  if (kdf === "scrypt") {
    const memory = 128 * number("n") * number("r");
    if (!(memory <= MAX_SCRYPT_MEMORY) || !(number("p") <= 16))
      throw invalid("keystore", "asks for scrypt parameters above n = 262144, r = 8, p = 16");
  } else if (kdf === "pbkdf2") {
    if (!(number("c") <= MAX_PBKDF2_ROUNDS)) throw invalid("keystore", "asks for more than 262144 pbkdf2 rounds");
  }
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
