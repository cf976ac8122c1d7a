import { createHash, randomBytes } from "node:crypto";

/** The prefix of every access key, so secret scanners can find a leaked one. */
export const ACCESS_KEY_PREFIX = "nfto_";

/** A new access-key secret: the prefix and 32 random bytes, base64url. Shown once, never stored. */
export function newAccessKeySecret(): string {
  return ACCESS_KEY_PREFIX + randomBytes(32).toString("base64url");
}

/**
 * What the store keeps of a secret. SHA-256 and not a password hash: the secret is 256 random
 * bits, so there is nothing to guess, and a lookup by hash costs microseconds on every request.
 */
export function accessKeyHash(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}
