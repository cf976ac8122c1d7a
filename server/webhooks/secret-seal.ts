import type { SqlExecutor } from "../db";
import type { MasterKey } from "../wallets/master-key";
import { MasterKeyError } from "../wallets/master-key-check";
import type { PreviousSecret } from "./signing";

/** How a sealed secret is stored: `sealed:v1:<nonce>.<ciphertext>.<tag>`, each base64. */
const PREFIX = "sealed:v1:";

/**
 * Webhook secrets at rest, sealed under WALLET_MASTER_KEY as the wallets' keys are (AES-256-GCM,
 * the endpoint's id as associated data): a copy of the store cannot sign events. Without a master
 * key (RPC_URL and no WALLET_MASTER_KEY) they are kept as given; such a secret, or one from before
 * sealing, opens as itself.
 */
export class SecretSeal {
  constructor(private readonly key?: MasterKey) {}

  seal(endpointId: string, secret: string): string {
    return this.key ? sealWith(this.key, endpointId, secret) : secret;
  }

  open(endpointId: string, stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    if (!this.key) throw new Error("the endpoint's secret is sealed, and WALLET_MASTER_KEY is not set");
    return openWith(this.key, endpointId, stored);
  }
}

function sealWith(key: MasterKey, endpointId: string, secret: string): string {
  const { nonce, ciphertext, tag } = key.sealWebhookSecret(endpointId, Buffer.from(secret, "utf8"));
  return PREFIX + [nonce, ciphertext, tag].map((b) => b.toString("base64")).join(".");
}

function openWith(key: MasterKey, endpointId: string, stored: string): string {
  const [nonce, ciphertext, tag] = stored
    .slice(PREFIX.length)
    .split(".")
    .map((b) => Buffer.from(b, "base64"));
  return key.openWebhookSecret(endpointId, { nonce, ciphertext, tag }).toString("utf8");
}

interface SecretRow {
  id: string;
  secret: string;
  previous_secret: PreviousSecret[] | string | null;
}

/**
 * Re-seals every endpoint's secrets (current and rotated out) on `tx`: from `current` (null:
 * unsealed ones only, sealed now) to `next`. Rows locked meanwhile. Throws MasterKeyError when
 * `current` does not open one. Answers how many endpoints changed.
 */
export async function resealWebhookSecrets(
  tx: SqlExecutor,
  current: MasterKey | null,
  next: MasterKey,
): Promise<number> {
  const { rows } = await tx.query<SecretRow>("SELECT id, secret, previous_secret FROM webhook_endpoints FOR UPDATE");
  let changed = 0;
  for (const row of rows) {
    const reseal = (stored: string) => {
      if (!stored.startsWith(PREFIX)) return sealWith(next, row.id, stored);
      if (!current) return stored;
      try {
        return sealWith(next, row.id, openWith(current, row.id, stored));
      } catch {
        throw new MasterKeyError("WALLET_MASTER_KEY is wrong: it does not decrypt the webhook secrets in the store");
      }
    };
    const previous = typeof row.previous_secret === "string" ? JSON.parse(row.previous_secret) : row.previous_secret;
    const secret = reseal(row.secret);
    const resealed = (previous as PreviousSecret[] | null)?.map((p) => ({ ...p, secret: reseal(p.secret) })) ?? null;
    if (secret === row.secret && JSON.stringify(resealed) === JSON.stringify(previous)) continue;
    await tx.query("UPDATE webhook_endpoints SET secret = $2, previous_secret = $3 WHERE id = $1", [
      row.id,
      secret,
      resealed && JSON.stringify(resealed),
    ]);
    changed++;
  }
  return changed;
}

/**
 * At start, with a master key: seals the secrets kept unsealed (from before sealing, or made
 * without a key), and refuses a key that does not open those already sealed.
 */
export async function sealStoredSecrets(
  db: { transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> },
  key: MasterKey,
) {
  await db.transaction(async (tx) => {
    const { rows } = await tx.query<SecretRow>(
      `SELECT id, secret, previous_secret FROM webhook_endpoints WHERE secret LIKE 'sealed:%' LIMIT 1`,
    );
    if (rows[0]) {
      try {
        openWith(key, rows[0].id, rows[0].secret);
      } catch {
        throw new MasterKeyError("WALLET_MASTER_KEY is wrong: it does not decrypt the webhook secrets in the store");
      }
    }
    await resealWebhookSecrets(tx, null, key);
  });
}
