import { LRUCache } from "lru-cache";
import { Wallet, type TransactionRequest, type TypedDataDomain, type TypedDataField } from "ethers";
import { ApiError } from "../http/errors";
import type { SignerDirectory, TransactionSigner } from "../signers/signer";
import { MemoryKey } from "./key-signing";

/** A key sent with a request (`privateKey`): held in memory only, for as long as the pool keeps it. */
export class PooledSigner implements TransactionSigner {
  readonly kind = "request";
  readonly address: string;
  private readonly key: MemoryKey;

  constructor(key: MemoryKey | Wallet) {
    this.key = key instanceof Wallet ? MemoryKey.fromHex(key.privateKey)! : key;
    this.address = this.key.address;
  }

  signTransaction(tx: TransactionRequest): Promise<string> {
    return this.key.signTransaction(tx);
  }

  signTypedData(
    domain: TypedDataDomain,
    types: Record<string, TypedDataField[]>,
    value: Record<string, unknown>,
  ): Promise<string> {
    return this.key.signTypedData(domain, types, value);
  }
}

export interface SignerPoolOptions {
  /** Keys held at most; the least recently used goes first. */
  max: number;
  /** A key unused this long is dropped. */
  idleMs: number;
}

export const DEFAULT_SIGNER_POOL: SignerPoolOptions = { max: 10_000, idleMs: 60 * 60 * 1000 };

const KEY_PATTERN = /^(0x)?[0-9a-fA-F]{64}$/;

/**
 * The wallets of the keys requests have signed with, bounded: an LRU with a cap and idle eviction,
 * so random keys on read routes cannot grow it without end. Keys live in memory only and are never
 * logged; the follower finds a key by address when an operation needs a new signature, and waits
 * for the key's next request when it has been dropped.
 */
export class SignerPool implements SignerDirectory {
  private readonly byKey: LRUCache<string, PooledSigner>;
  private readonly byAddress: LRUCache<string, PooledSigner>;

  constructor(options: SignerPoolOptions = DEFAULT_SIGNER_POOL) {
    const lru = { max: options.max, ttl: options.idleMs, updateAgeOnGet: true, ttlAutopurge: true };
    this.byKey = new LRUCache<string, PooledSigner>(lru);
    this.byAddress = new LRUCache<string, PooledSigner>(lru);
  }

  get(privateKey: string): PooledSigner {
    const normalized = normalizeKey(privateKey);
    let entry = this.byKey.get(normalized);
    if (!entry) {
      const key = MemoryKey.fromHex(normalized);
      if (!key) {
        throw new ApiError("VALIDATION_ERROR", "privateKey is not a valid secp256k1 key", [
          { path: "privateKey", message: "not a valid secp256k1 private key" },
        ]);
      }
      entry = new PooledSigner(key);
      this.byKey.set(normalized, entry);
    }
    this.byAddress.set(entry.address, entry);
    return entry;
  }

  signerOf(address: string): Promise<TransactionSigner | undefined> {
    return Promise.resolve(this.byAddress.get(address));
  }

  get size(): number {
    return this.byKey.size;
  }
}

function normalizeKey(privateKey: string): string {
  if (!KEY_PATTERN.test(privateKey)) {
    throw new ApiError("VALIDATION_ERROR", "privateKey must be 32 bytes of hex", [
      { path: "privateKey", message: "must be 32 bytes of hex, 0x optional" },
    ]);
  }
  return (privateKey.startsWith("0x") ? privateKey : `0x${privateKey}`).toLowerCase();
}
