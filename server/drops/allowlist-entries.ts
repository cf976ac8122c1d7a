import { addressFault } from "../chain/address-checksum";
import type { ErrorDetail } from "../http/errors";
import { invalid } from "../http/validation";
import type { AllowlistEntry } from "./allowlist-tree";

const DECIMAL = /^[0-9]{1,78}$/;
const FIELDS = new Set(["address", "allowance", "price"]);
/** Bad fields named in a 400 at most: a list of 100,000 wrong rows is not echoed back whole. */
const MAX_DETAILS = 100;

/** What is wrong with an entry's address, in the words `address()` uses (checksummed when mixed-case). */
const ADDRESS_FAULTS = {
  format: "address must be a 20-byte hex address (0x…)",
  checksum: "address must be checksummed (EIP-55) if mixed-case",
} as const;

/** As `uint(name)` takes it: a decimal string or a safe JSON integer, below 2^256; else why not. */
function uintOf(value: unknown, name: string): bigint | string {
  if (typeof value === "number") {
    if (!Number.isInteger(value)) return `${name} must be an integer`;
    if (value < 0) return `${name} must be ≥ 0`;
    if (value > Number.MAX_SAFE_INTEGER) return `${name} is too large for a JSON number: send a decimal string`;
    return BigInt(value);
  }
  if (typeof value === "string" && /^[0-9]{79,}$/.test(value)) return `${name} must be at most 2^256 - 1 (78 digits)`;
  if (typeof value !== "string" || !DECIMAL.test(value)) return `${name} must be a non-negative decimal integer`;
  const parsed = BigInt(value);
  return parsed < 2n ** 256n ? parsed : `${name} must be at most 2^256 - 1 (78 digits)`;
}

/**
 * The allowlist's entries, checked in one loop: a zod schema per entry took seconds of a PUT of
 * 100,000. The same 400 VALIDATION_ERROR as the documented schema (`entries.N.field`: what is
 * wrong), and an address listed twice named with both rows.
 */
export function checkEntries(rows: unknown[]): AllowlistEntry[] {
  const problems: ErrorDetail[] = [];
  const entries: AllowlistEntry[] = [];
  const seen = new Map<string, number>();
  rows.forEach((row, i) => {
    const at = `entries.${i}`;
    if (typeof row !== "object" || row === null || Array.isArray(row)) {
      problems.push({ path: at, message: "each entry must be an object {address, allowance, price}" });
      return;
    }
    const fields = row as Record<string, unknown>;
    for (const key of Object.keys(fields))
      if (!FIELDS.has(key)) problems.push({ path: `${at}.${key}`, message: "unknown field" });
    const fault = addressFault(fields.address);
    const addressError = fault && ADDRESS_FAULTS[fault];
    const allowance = uintOf(fields.allowance, "allowance");
    const price = uintOf(fields.price, "price");
    const before = problems.length;
    if (addressError) problems.push({ path: `${at}.address`, message: addressError });
    if (typeof allowance === "string") problems.push({ path: `${at}.allowance`, message: allowance });
    if (typeof price === "string") problems.push({ path: `${at}.price`, message: price });
    if (problems.length > before) return;
    const address = (fields.address as string).toLowerCase();
    const first = seen.get(address);
    if (first !== undefined) {
      problems.push({ path: `${at}.address`, message: `listed twice: the same address as entries.${first}` });
      return;
    }
    seen.set(address, i);
    entries.push({ address, allowance: allowance as bigint, price: price as bigint });
  });
  if (problems.length > 0) {
    const more = problems.length - MAX_DETAILS;
    throw invalid(
      more > 0 ? [...problems.slice(0, MAX_DETAILS), { path: "entries", message: `and ${more} more` }] : problems,
    );
  }
  return entries;
}
