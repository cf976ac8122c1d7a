import type { AuditActor, AuditLog } from "../access";
import type { SqlDriver } from "../db";
import type { MasterKey } from "./master-key";
import { MasterKeyError } from "./master-key-check";
import { WalletStore } from "./wallet-store";
import { resealWebhookSecrets } from "../webhooks/secret-seal";

/**
 * Re-seals every local wallet's key (and every webhook secret) under `next`, in one transaction with the new key-check value
 * and its audit event: afterwards every wallet opens under `next` and none under `current`, or
 * (on any failure) nothing changed. The rows stay locked meanwhile, so no wallet is added under
 * the old key halfway.
 */
export async function rotateMasterKey(
  db: SqlDriver,
  current: MasterKey,
  next: MasterKey,
  audit: AuditLog,
  actor: AuditActor,
): Promise<number> {
  const store = new WalletStore(db);
  return db.transaction(async (tx) => {
    const check = await store.keyCheck(tx, "update");
    const wallets = await store.lockLocal(tx);
    if (check && !current.opensKeyCheck(check)) throw wrongKey();
    for (const wallet of wallets) {
      let key: Buffer;
      try {
        key = current.openWalletKey(wallet.address, wallet.sealedKey!);
      } catch {
        throw wrongKey();
      }
      try {
        await store.reseal(tx, wallet.address, next.sealWalletKey(wallet.address, key));
      } finally {
        key.fill(0);
      }
    }
    // Webhook endpoints' secrets are sealed under the same key.
    await resealWebhookSecrets(tx, current, next);
    await store.putKeyCheck(tx, next.keyCheck());
    await audit.record(tx, actor, {
      action: "master-key.rotated",
      targetType: "master-key",
      targetId: "WALLET_MASTER_KEY",
      details: { wallets: wallets.length },
    });
    return wallets.length;
  });
}

function wrongKey(): MasterKeyError {
  return new MasterKeyError("WALLET_MASTER_KEY is wrong: it does not decrypt the wallets in the store");
}
