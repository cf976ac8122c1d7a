import { Wallet, type Provider } from "ethers";
import { ApiError } from "../http/errors";
import { NonceQueue } from "./nonce-queue";

export interface PooledSigner {
  wallet: Wallet;
  address: string;
  queue: NonceQueue;
}

const KEY_PATTERN = /^(0x)?[0-9a-fA-F]{64}$/;

/**
 * One wallet and one nonce queue per key, so that every request signed by the same key shares
 * the same nonce bookkeeping. Keys stay in memory only; they are never logged.
 */
export class SignerPool {
  private readonly byKey = new Map<string, PooledSigner>();

  constructor(private readonly provider: Provider) {}

  get(privateKey: string): PooledSigner {
    const normalized = normalizeKey(privateKey);
    let entry = this.byKey.get(normalized);
    if (!entry) {
      let wallet: Wallet;
      try {
        wallet = new Wallet(normalized, this.provider);
      } catch {
        throw new ApiError("VALIDATION_ERROR", "privateKey is not a valid secp256k1 key", [
          { path: "privateKey", message: "not a valid secp256k1 private key" },
        ]);
      }
      entry = { wallet, address: wallet.address, queue: new NonceQueue(wallet) };
      this.byKey.set(normalized, entry);
    }
    return entry;
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
