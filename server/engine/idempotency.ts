import { createHash } from "node:crypto";
import { ApiError } from "../http/errors";

/** 1 to 255 visible ASCII characters (API.md). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key header, if sent; 400 when it is not 1-255 visible ASCII characters. */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined || header === "") return undefined;
  if (!KEY_PATTERN.test(header)) {
    throw new ApiError("VALIDATION_ERROR", "Idempotency-Key must be 1 to 255 visible ASCII characters", [
      { path: "Idempotency-Key", message: "1 to 255 visible ASCII characters" },
    ]);
  }
  return header;
}

/**
 * What makes two requests "the same body": the operation and its parsed input without the key
 * (the key is the caller, the scope of the Idempotency-Key). Parsed, so "2" and 2 agree.
 */
export function fingerprintOf(operation: string, input: Record<string, unknown>): string {
  const { privateKey: _omitted, ...rest } = input;
  return createHash("sha256")
    .update(canonicalJson({ operation, input: rest }))
    .digest("hex");
}

function canonicalJson(value: unknown): string {
  if (typeof value === "bigint") return JSON.stringify(value.toString());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
