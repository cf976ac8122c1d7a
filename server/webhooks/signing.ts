import { createHmac, randomBytes } from "node:crypto";

/** The prefix of every endpoint secret (Standard Webhooks): the HMAC key is the base64 after it. */
const SECRET_PREFIX = "whsec_";

/** A new endpoint secret: `whsec_` and 32 random bytes in base64. Shown once. */
export function newEndpointSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}

/**
 * The `webhook-signature` header of Standard Webhooks: `v1,<base64 HMAC-SHA256 of id.timestamp.body>`
 * for each secret, space-separated (two during a rotation). Checked against the `standardwebhooks`
 * package's own `Webhook.verify` and `Webhook.sign` in the tests; node:crypto here, for speed.
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => {
      const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64");
      return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
    })
    .join(" ");
}

/** A secret rotated out, and when it stops signing (webhook_endpoints.previous_secret, migration 12). */
export interface PreviousSecret {
  secret: string;
  until: string;
}

/** The secrets rotated out that still sign now, newest first. */
export function stillSigning(previous: PreviousSecret[] | null): PreviousSecret[] {
  return (previous ?? []).filter((p) => Date.parse(p.until) > Date.now());
}
