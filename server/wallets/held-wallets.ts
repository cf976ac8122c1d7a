import { getAddress } from "ethers";
import { LRUCache } from "lru-cache";
import { ApiError, walletNotFound } from "../http/errors";
import type { HeldWallets, SignerDirectory, TransactionSigner } from "../signers/signer";
import { LocalWalletSigner } from "./local-signer";
import type { MasterKey } from "./master-key";
import { Pkcs11SignerError, signerUnavailable, type Pkcs11Keys } from "./pkcs11-keys";
import type { WalletRecord, WalletStore } from "./wallet-store";

/**
 * How long a wallet looked up is trusted: a deletion, a new label or a new limit on one instance
 * reaches every other within this, while a busy wallet costs one store read per interval, not per write.
 */
export const WALLET_CACHE_MS = 1_000;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * The wallets the service holds, as signers: `from` (an address or a label) on /nft routes, and the
 * follower's re-signs by address. Lookups are cached briefly (misses too, so unknown names cost the
 * store nothing); a local key stays sealed in the cache and is opened per signature only.
 */
export class HeldWalletSigners implements HeldWallets {
  private readonly cache = new LRUCache<string, { wallet: WalletRecord | null }>({ max: 10_000, ttl: WALLET_CACHE_MS });
  private readonly lookups = new Map<string, Promise<WalletRecord | null>>();

  constructor(
    private readonly store: WalletStore,
    private readonly masterKey: MasterKey | undefined,
    private readonly pkcs11: Pkcs11Keys,
  ) {}

  /**
   * The wallet `from` names, among the addresses `usable` (lower case; null: all); 404
   * WALLET_NOT_FOUND when the service does not hold it or it is not usable, before its signer is
   * reached (a token's state must not tell one from the other either).
   */
  async signerFor(addressOrLabel: string, usable: readonly string[] | null = null): Promise<TransactionSigner> {
    const wallet = await this.find(addressOrLabel);
    if (!wallet || (usable !== null && !usable.includes(wallet.address.toLowerCase()))) throw walletNotFound();
    return this.signerOfWallet(wallet);
  }

  /** The held wallet at `address`, if any, as a signer (the follower's way in, via the SignerDirectory). */
  async signerOf(address: string): Promise<TransactionSigner | undefined> {
    const wallet = await this.find(address);
    return wallet ? this.signerOfWallet(wallet) : undefined;
  }

  /** The held wallet by address or label, through the cache. */
  find(addressOrLabel: string): Promise<WalletRecord | null> {
    const key = ADDRESS.test(addressOrLabel) ? `a:${addressOrLabel.toLowerCase()}` : `l:${addressOrLabel}`;
    const cached = this.cache.get(key);
    if (cached) return Promise.resolve(cached.wallet);
    let pending = this.lookups.get(key);
    if (!pending) {
      pending = (
        key.startsWith("a:")
          ? this.store.find(getAddress(addressOrLabel.toLowerCase()))
          : this.store.findByLabel(addressOrLabel)
      )
        .then((wallet) => {
          this.cache.set(key, { wallet });
          return wallet;
        })
        .finally(() => this.lookups.delete(key));
      this.lookups.set(key, pending);
    }
    return pending;
  }

  /** Forgets what this process cached, after a change here (other instances: WALLET_CACHE_MS). */
  forgetAll(): void {
    this.cache.clear();
  }

  private async signerOfWallet(wallet: WalletRecord): Promise<TransactionSigner> {
    if (wallet.kind === "local") {
      // A start with local wallets and no master key is refused (master-key-check.ts): this is a wallet
      // made by another instance since, while this one runs without one.
      if (!this.masterKey || !wallet.sealedKey)
        throw new ApiError("INTERNAL_ERROR", "This instance has no WALLET_MASTER_KEY for the wallet's key");
      return new LocalWalletSigner(wallet.address, wallet.sealedKey, this.masterKey);
    }
    const keyLabel = wallet.keyLabel!;
    // The token absent, logged out or without the key: it cannot sign now (503), it may again later.
    const signer = await this.pkcs11.signer(keyLabel).catch((err: unknown) => {
      throw err instanceof Pkcs11SignerError ? signerUnavailable(err) : err;
    });
    if (signer.address !== wallet.address) {
      // The token's key under this label is another key now: never sign for the wallet with it.
      this.pkcs11.forget(keyLabel);
      throw new Error(
        `wallet ${wallet.label}: the key labelled "${keyLabel}" in the token is no longer this wallet's key`,
      );
    }
    return signer;
  }
}

/**
 * Who can sign without a request, for the engine's follower: a request key still in memory first,
 * then a held wallet, so a wallet's operations are re-signed (fee bumps, new nonces, nonce fills)
 * with no request at all, after a restart too.
 */
export class ServiceSignerDirectory implements SignerDirectory {
  constructor(
    private readonly requestKeys: SignerDirectory,
    private readonly wallets: HeldWalletSigners,
  ) {}

  async signerOf(address: string): Promise<TransactionSigner | undefined> {
    return (await this.requestKeys.signerOf(address)) ?? (await this.wallets.signerOf(address));
  }
}
