import type { SqlExecutor } from "../db";
import type { MasterKey } from "../wallets/master-key";
import { MasterKeyError } from "../wallets/master-key-check";
import type { PreviousSecret } from "./signing";

/** How a sealed secret is stored: `sealed:v1:<nonce>.<ciphertext>.<tag>`, each base64. */
const PREFIX = "sealed:v1:";

/**
 * Webhook secrets at rest, sealed by the wallets' MasterKey under WALLET_MASTER_KEY (AES-256-GCM,
 * the endpoint's id as associated data): a copy of the store cannot sign events. Without a master
 * key (RPC_URL and no WALLET_MASTER_KEY) they are kept as given; such a secret, or one from before
 * sealing, opens as itself.
 */
export class SecretSeal {
  constructor(private readonly key?: MasterKey) {}

  seal(endpointId: string, secret: string): string {
    if (!this.key) return secret;
    const { nonce, ciphertext, tag } = this.key.sealWebhookSecret(endpointId, Buffer.from(secret, "utf8"));
    return PREFIX + [nonce, ciphertext, tag].map((b) => b.toString("base64")).join(".");
  }

  open(endpointId: string, stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    if (!this.key) throw new Error("the endpoint's secret is sealed, and WALLET_MASTER_KEY is not set");
    const [nonce, ciphertext, tag] = stored
      .slice(PREFIX.length)
      .split(".")
      .map((b) => Buffer.from(b, "base64"));
    return this.key.openWebhookSecret(endpointId, { nonce, ciphertext, tag }).toString("utf8");
  }
}

/**
 * Seals every endpoint's secrets (current and rotated out) under `next`, rows locked: those sealed
 * are opened under `current` (MasterKeyError when one does not open), those kept unsealed are
 * sealed now. At each start with a master key (`current` = `next`: the sealed ones are checked and
 * left as they are), and by a rotation of the master key.
 */
export async function resealWebhookSecrets(tx: SqlExecutor, current: MasterKey, next: MasterKey): Promise<void> {
  const [from, to] = [new SecretSeal(current), new SecretSeal(next)];
  const { rows } = await tx.query<{ id: string; secret: string; previous_secret: PreviousSecret[] | null }>(
    "SELECT id, secret, previous_secret FROM webhook_endpoints FOR UPDATE",
  );
  for (const row of rows) {
    const reseal = (stored: string) => {
      let secret: string;
      try {
        secret = from.open(row.id, stored);
      } catch {
        throw new MasterKeyError("WALLET_MASTER_KEY is wrong: it does not decrypt the webhook secrets in the store");
      }
      return current === next && stored.startsWith(PREFIX) ? stored : to.seal(row.id, secret);
    };
    const secret = reseal(row.secret);
    const previous = row.previous_secret?.map((p) => ({ ...p, secret: reseal(p.secret) })) ?? null;
    if (secret === row.secret && JSON.stringify(previous) === JSON.stringify(row.previous_secret)) continue;
    await tx.query("UPDATE webhook_endpoints SET secret = $2, previous_secret = $3 WHERE id = $1", [
      row.id,
      secret,
      previous && JSON.stringify(previous),
    ]);
  }
}
