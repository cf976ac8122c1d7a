import { randomBytes } from "node:crypto";

export { signatureHeader } from "./sender-thread";

/** The prefix of every endpoint secret (Standard Webhooks): the HMAC key is the base64 after it. */
export const SECRET_PREFIX = "whsec_";

/** A new endpoint secret: `whsec_` and 32 random bytes in base64. Shown once. */
export function newEndpointSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString("base64");
}
