import { z } from "zod";
import { address, chainField, privateKey } from "../http/fields";

// The fields several folders share live in http/fields; the /nft routes take them from here too.
export { address, chainField, decimal, privateKey, uint } from "../http/fields";

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

/**
 * An /nft request body: `shape` with exactly one of `privateKey` and `from`, and no other field
 * (strict: parseBody refuses an undeclared field, and the document says so).
 */
export function nftBody<Shape extends z.ZodRawShape>(shape: Shape) {
  return (
    z
      .strictObject(shape)
      .superRefine((body, ctx) => {
        const given = ["privateKey", "from"].filter((k) => (body as Record<string, unknown>)[k] !== undefined);
        if (given.length !== 1) {
          ctx.addIssue({
            code: "custom",
            path: [given.length === 0 ? "privateKey" : "from"],
            message: "exactly one of privateKey and from is required",
          });
        }
      })
      // The superRefine's rule, where a client reads it.
      .openapi({ oneOf: [{ required: ["privateKey"] }, { required: ["from"] }] } as object)
  );
}
