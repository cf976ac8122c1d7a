/**
 * The request and response fields several folders share (addresses, integers, a request's chain):
 * a base module that imports no feature, so any route may take them.
 */
import { getAddress, isAddress } from "ethers";
import { z } from "zod";
import "./openapi";

/**
 * An unsigned integer given as a decimal string or a JSON integer; always a bigint after parsing.
 * Its bounds (`min` 0 or 1, `max` at most 2^256 - 1) are in the schema of both forms: the number's
 * minimum and maximum (up to 2^53 - 1), the string's pattern (a range of decimals, leading zeros
 * allowed), so that a client reads from the document what the route takes. The string's pattern
 * is the regex the route parses it with, so the two agree by construction.
 */
export const uint = (name: string, bounds: { min?: 0n | 1n; max?: bigint } = {}) => {
  const min = bounds.min ?? 0n;
  const range = bounds.max !== undefined ? ` ${min} to ${bounds.max}` : min === 1n ? " ≥ 1" : "";
  const numberMax = bounds.max !== undefined && bounds.max < MAX_SAFE ? Number(bounds.max) : Number.MAX_SAFE_INTEGER;
  return z
    .union([
      z.string().regex(decimalRange(min, bounds.max), {
        // Digits past 78 are a number beyond 256 bits: say the maximum, not the form.
        error: (issue) =>
          bounds.max === undefined && typeof issue.input === "string" && /^[0-9]{79,}$/.test(issue.input)
            ? `${name} must be at most 2^256 - 1 (78 digits)`
            : `${name} must be a${range ? "" : " non-negative"} decimal integer${range}`,
      }),
      z
        .number()
        .int(`${name} must be an integer`)
        .min(Number(min), `${name} must be ≥ ${min}`)
        .max(
          numberMax,
          numberMax === Number.MAX_SAFE_INTEGER
            ? `${name} is too large for a JSON number: send a decimal string`
            : `${name} must be${range}`,
        ),
    ])
    .transform((v) => BigInt(v))
    .refine((v) => v < 2n ** 256n, `${name} must be at most 2^256 - 1 (78 digits)`)
    .openapi({
      example: "1",
      description: `${name}: a JSON integer, or a decimal string (needed above 2^53 - 1)${range ? `;${range}` : "; below 2^256"}`,
    });
};

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A regular expression of the decimals from `min` (0 or 1) to `max` (unset: any of up to 77
 * digits), leading zeros allowed: each length below max's, then max's length digit by digit.
 */
export function decimalRange(min: 0n | 1n, max?: bigint): RegExp {
  // 78 digits hold 2^256 - 1 (and more: the 256-bit bound is in the description, its regex is kilobytes).
  if (max === undefined) return min === 0n ? /^[0-9]{1,78}$/ : /^0{0,77}[1-9][0-9]{0,77}$/;
  const digits = max.toString();
  const k = digits.length;
  const alternatives: string[] = [];
  // Shorter than max: one digit (0 allowed when min is 0), then 2 to k - 1 digits with no leading zero.
  if (k > 1) alternatives.push(min === 0n ? "[0-9]" : "[1-9]");
  if (k > 2) alternatives.push(`[1-9][0-9]{1,${k - 2}}`);
  // As long as max: its first i digits, then a smaller digit, then any.
  for (let i = 0; i < k; i++) {
    const low = i === 0 ? (k === 1 ? Number(min) : 1) : 0;
    const high = Number(digits[i]) - 1;
    if (high >= low)
      alternatives.push(`${digits.slice(0, i)}[${low}-${high}]${k - i - 1 > 0 ? `[0-9]{${k - i - 1}}` : ""}`);
  }
  if (max >= min) alternatives.push(digits);
  return new RegExp(`^0*(?:${alternatives.join("|")})$`);
}

/** Checksummed form of each address seen; a checksum is a keccak hash, too dear to redo per request. */
const checksummed = new Map<string, string | null>();
const CHECKSUM_CACHE_SIZE = 10_000;

function checksumOf(value: string): string | null {
  let result = checksummed.get(value);
  if (result === undefined) {
    result = /^0x[0-9a-fA-F]{40}$/.test(value) && isAddress(value) ? getAddress(value) : null;
    if (checksummed.size >= CHECKSUM_CACHE_SIZE) checksummed.clear();
    checksummed.set(value, result);
  }
  return result;
}

export const address = (name: string) =>
  z
    .string()
    .refine((v) => checksumOf(v) !== null, `${name} must be a 20-byte hex address (0x…), checksummed if mixed-case`)
    .transform((v) => checksumOf(v) as string)
    .openapi({
      pattern: "^0x[0-9a-fA-F]{40}$",
      description: `${name}: 20 bytes of hex; checksummed (EIP-55) if mixed-case`,
      example: "0x5FbDB2315678afecb367f032d93F642f64180aa3",
    });

/** A collection limit's entry split: its chain (an id or name; undefined = every chain) and its address. */
export function collectionEntry(entry: string): { chain?: string; address: string } {
  const colon = entry.lastIndexOf(":");
  return colon < 0 ? { address: entry } : { chain: entry.slice(0, colon), address: entry.slice(colon + 1) };
}

/** A key's or a webhook's `collections[]` entry: an address (every chain) or "<chain>:<address>". */
export const collectionEntryField = z
  .string()
  .max(150)
  // The form, where a client reads it; the checksum of a mixed-case address is the refine's.
  .regex(/^(?:[^:]+:)?0x[0-9a-fA-F]{40}$/)
  .refine(
    (v) => address("collections[]").safeParse(collectionEntry(v).address).success,
    'collections[] must be an address (0x…, every chain) or "<chain>:<address>" (a chain id or name)',
  );

export const privateKey = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, "privateKey must be 32 bytes of hex, 0x optional")
  .openapi({
    description: "Signs every write and names the caller for reads. Never logged or returned.",
    // A throwaway key of no account anyone uses: the example must pass the pattern above.
    example: "0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
  });

/** An integer in a response: a decimal string, since it may pass 2^53. */
export const decimal = z.string().regex(/^\d+$/);

/** A request's `chain` (body) or `?chain=` (query): an id or a name; the registry checks it. */
export const chainField = z
  .union([z.string().min(1).max(100), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)])
  .optional()
  .openapi({
    description:
      "The chain, by id (a number or decimal string) or name (GET /chains lists them); required when several chains are configured",
    example: "31337",
  });

/** `?chain=` alone: a read's query on a route of one chain. */
export const ChainQuery = z.object({ chain: chainField });

/** Open routes: an access key only with REQUIRE_ACCESS_KEY=true. */
export const OPEN_SECURITY: Array<Record<string, string[]>> = [{}, { AccessKey: [] }];

/** The ERC-20 a collection's prices are in; absent where they are in the chain's native coin. */
export const paymentTokenView = z
  .object({
    address: z.string().openapi({ example: "0x5FbDB2315678afecb367f032d93F642f64180aa3" }),
    symbol: z.string().openapi({ example: "TUSD" }),
    decimals: z.number().int().openapi({ example: 6 }),
  })
  .openapi("PaymentToken", {
    description: "The ERC-20 prices are in (cost and value are in its smallest unit); absent for the native coin",
  });
