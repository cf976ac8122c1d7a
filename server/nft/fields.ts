import { getAddress, isAddress } from "ethers";
import { z } from "zod";
import "../http/openapi";
import { chainField } from "../chains/registry";

/**
 * An unsigned integer given as a decimal string or a JSON integer; always a bigint after parsing.
 * Documented as what it accepts: an integer (up to 2^53 - 1) or a string of decimal digits.
 */
export const uint = (name: string) =>
  z
    .union([
      z.string().regex(/^[0-9]{1,78}$/, `${name} must be a non-negative decimal integer`),
      z
        .number()
        .int(`${name} must be an integer`)
        .nonnegative(`${name} must be ≥ 0`)
        .max(Number.MAX_SAFE_INTEGER, `${name} is too large for a JSON number: send a decimal string`),
    ])
    .transform((v) => BigInt(v))
    .refine((v) => v < 2n ** 256n, `${name} must fit in 256 bits`)
    .openapi({
      example: "1",
      description: `${name}: a JSON integer, or a decimal string (needed above 2^53 - 1)`,
    });

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

export const privateKey = z
  .string()
  .regex(/^(0x)?[0-9a-fA-F]{64}$/, "privateKey must be 32 bytes of hex, 0x optional")
  .openapi({
    description: "Signs every write and names the caller for reads. Never logged or returned.",
    // A throwaway key of no account anyone uses: the example must pass the pattern above.
    example: "0x0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
  });

/** A wallet the service holds, by address or label: signs instead of a `privateKey`. */
export const from = z.string().min(1).max(100).openapi({
  description: "A wallet the service holds (its address or label), instead of privateKey; needs an access key",
  example: "treasury",
});

/** Who signs (or, for a read, who asks): exactly one of a request key and a held wallet. */
export const signerFields = { privateKey: privateKey.optional(), from: from.optional() };

/** The fields every /nft operation takes. */
export const common = {
  ...signerFields,
  contractAddress: address("contractAddress"),
  chain: chainField,
};

/** An /nft request body: `shape` with exactly one of `privateKey` and `from`. */
export function nftBody<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.object(shape).superRefine((body, ctx) => {
    const given = ["privateKey", "from"].filter((k) => (body as Record<string, unknown>)[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: "custom",
        path: [given.length === 0 ? "privateKey" : "from"],
        message: "exactly one of privateKey and from is required",
      });
    }
  });
}

/** An integer in a response: a decimal string, since it may pass 2^53. */
export const decimal = z.string().regex(/^\d+$/);
