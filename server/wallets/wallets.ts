import type { SqlDriver } from "../db";
import type { Logger } from "../http/logger";
import type { HeldWallets, SignerDirectory, TransactionSigner } from "../signers/signer";
import { HeldWalletSigners, ServiceSignerDirectory } from "./held-wallets";
import { KeystoreImporter } from "./keystore-import";
import { checkMasterKey, type MasterKeySource } from "./master-key-check";
import { Pkcs11Keys, type Pkcs11Settings } from "./pkcs11-keys";
import { DailySpendLimit } from "./spend-limit";
import { WalletStore } from "./wallet-store";

export interface OpenWalletsOptions {
  db: SqlDriver;
  /** The master key in force (resolveMasterKey), or none. */
  masterKey: MasterKeySource;
  /** PKCS11_MODULE, PKCS11_TOKEN_LABEL, PKCS11_PIN; unset = no pkcs11 wallets. */
  pkcs11?: Pkcs11Settings;
  logger: Logger;
}

/**
 * The wallets the service holds (API.md, "Wallets"): their store, their signers for `from` and for
 * the follower, the daily spend limit the engine asks, and what the /wallets routes need.
 */
export class Wallets implements HeldWallets {
  readonly store: WalletStore;
  readonly signers: HeldWalletSigners;
  readonly pkcs11: Pkcs11Keys;
  readonly keystores = new KeystoreImporter();

  constructor(
    readonly db: SqlDriver,
    readonly masterKey: MasterKeySource,
    pkcs11: Pkcs11Settings | undefined,
    logger: Logger,
  ) {
    this.store = new WalletStore(db);
    this.pkcs11 = new Pkcs11Keys(pkcs11, logger.child({ component: "pkcs11" }));
    this.signers = new HeldWalletSigners(this.store, masterKey.key, this.pkcs11);
  }

  /** The daily spend limit the engine of chain `chainId` asks: limits and spend are per chain. */
  spendGuard(chainId: string): DailySpendLimit {
    return new DailySpendLimit(this.store, this.signers, chainId);
  }

  signerFor(addressOrLabel: string, usable: readonly string[] | null = null): Promise<TransactionSigner> {
    return this.signers.signerFor(addressOrLabel, usable);
  }

  /** The engine's signers without a request: request keys still in memory first, then these wallets. */
  directory(requestKeys: SignerDirectory): SignerDirectory {
    return new ServiceSignerDirectory(requestKeys, this.signers);
  }

  /** Closes the PKCS#11 token (after the engine has stopped signing). */
  close(): Promise<void> {
    return this.pkcs11.close();
  }
}

/**
 * The wallets on the service's store, once the master key is known to open them: a start with
 * local wallets and no (or the wrong) master key is refused with a MasterKeyError.
 */
export async function openWallets(options: OpenWalletsOptions): Promise<Wallets> {
  const wallets = new Wallets(options.db, options.masterKey, options.pkcs11, options.logger);
  await checkMasterKey(options.db, wallets.store, options.masterKey);
  wallets.pkcs11.warmUp();
  return wallets;
}
