/** Wallets: keys the service holds (API.md, "Wallets"). */
export { Wallets, openWallets, type OpenWalletsOptions } from "./wallets";
export { createWalletRouter, registerWalletOpenApi, type WalletRouteDeps } from "./router";
export { resolveMasterKey, MasterKeyError, type MasterKeySource } from "./master-key-check";
export { MasterKey, masterKeyPath, MASTER_KEY_FILE } from "./master-key";
export { WalletStore, type WalletRecord } from "./wallet-store";
export { balanceCrossing, LowBalanceWatcher, type BalanceCrossing } from "./low-balance";
export { WALLET_CACHE_MS } from "./held-wallets";
export type { Pkcs11Settings } from "./pkcs11-keys";
