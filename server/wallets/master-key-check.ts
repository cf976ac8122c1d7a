import type { SqlDriver, SqlExecutor } from "../db";
import { ApiError } from "../http/errors";
import { MasterKey, readMasterKeyFile, writeMasterKeyFile } from "./master-key";
import type { WalletStore } from "./wallet-store";

/** The master key in force and where it came from (for the banner: never the key itself). */
export interface MasterKeySource {
  key?: MasterKey;
  from: "WALLET_MASTER_KEY" | "file" | "none";
  /** The master key file, when the key came from one (or was made in one). */
  file?: string;
  /** True when this start made the file. */
  created?: boolean;
}

/** A start refused over the master key; its message is the one line the service prints. */
export class MasterKeyError extends Error {}

/**
 * WALLET_MASTER_KEY when set; otherwise, where the entry allows one (npm start's embedded chain),
 * the key in `file`, made there (mode 0600) when missing and the store holds no local wallet yet.
 */
export async function resolveMasterKey(
  configured: Buffer | undefined,
  file: string | undefined,
  store: WalletStore,
): Promise<MasterKeySource> {
  if (configured) return { key: new MasterKey(configured), from: "WALLET_MASTER_KEY" };
  if (!file) return { from: "none" };
  const existing = await readMasterKeyFile(file);
  if (existing) return { key: existing, from: "file", file };
  if ((await store.countLocal()) > 0) {
    throw new MasterKeyError(
      `WALLET_MASTER_KEY is missing: the store holds local wallets and ${file} (where npm start keeps a key it made) does not exist`,
    );
  }
  const made = MasterKey.generate();
  await writeMasterKeyFile(file, made);
  return { key: made, from: "file", file, created: true };
}

/**
 * Refuses a start whose master key cannot open the store's local wallets: missing, or another key
 * than the one they are sealed under. With no local wallet in the store any key is fine, and the
 * store's key-check value is (re)written for it.
 */
export async function checkMasterKey(db: SqlDriver, store: WalletStore, source: MasterKeySource): Promise<void> {
  await db.transaction(async (tx) => {
    const check = await store.keyCheck(tx, "update");
    const locals = await store.countLocal(tx);
    const key = source.key;
    if (locals === 0) {
      if (key && !(check && key.opensKeyCheck(check))) await store.putKeyCheck(tx, key.keyCheck());
      return;
    }
    if (!key) {
      throw new MasterKeyError(
        `WALLET_MASTER_KEY is missing: the store holds ${locals} local wallet${locals === 1 ? "" : "s"} sealed under a master key`,
      );
    }
    const opens = check ? key.opensKeyCheck(check) : await opensAWallet(tx, store, key);
    if (!opens) {
      const where = source.from === "file" ? ` (the key was read from ${source.file})` : "";
      throw new MasterKeyError(`WALLET_MASTER_KEY is wrong: it does not decrypt the wallets in the store${where}`);
    }
    if (!check) await store.putKeyCheck(tx, key.keyCheck());
  });
}

/**
 * Within a transaction that seals a new wallet: the store's wallets must be sealed under this
 * instance's key (a rotation on another instance, or by the command, makes it stale). Holds the
 * key-check row for the rest of `tx`, so no rotation runs in between.
 */
export async function requireCurrentMasterKey(tx: SqlExecutor, store: WalletStore, key: MasterKey): Promise<void> {
  const check = await store.keyCheck(tx, "share");
  if (!check) {
    await store.putKeyCheck(tx, key.keyCheck());
    return;
  }
  if (!key.opensKeyCheck(check)) {
    throw new ApiError(
      "INTERNAL_ERROR",
      "This instance's WALLET_MASTER_KEY is not the one the store's wallets are sealed under (rotated?): restart it with the current key",
    );
  }
}

async function opensAWallet(tx: SqlExecutor, store: WalletStore, key: MasterKey): Promise<boolean> {
  const [wallet] = (await store.lockLocal(tx)).slice(0, 1);
  if (!wallet?.sealedKey) return false;
  try {
    key.openWalletKey(wallet.address, wallet.sealedKey).fill(0);
    return true;
  } catch {
    return false;
  }
}
