import { z } from "zod";
import { address, collectionEntryField, decimalRange } from "../../http/fields";
import { ApprovalRuleSchema } from "../approval-rule";
import { ScopeSchema } from "../scopes";

export const CreateAccessKeyRequest = z
  .object({
    name: z
      .string()
      .min(1)
      .max(100)
      .refine((v) => !v.includes("\0"), "must not contain NUL"),
    scopes: z.array(ScopeSchema).min(1),
    wallets: z.array(address("wallets[]")).optional(),
    collections: z
      .array(collectionEntryField)
      .optional()
      .openapi({
        description: 'Collections the key may act on: an address (on every chain) or "<chain>:<address>"; absent = all',
        example: ["0x5FbDB2315678afecb367f032d93F642f64180aa3", "base:0x5FbDB2315678afecb367f032d93F642f64180aa3"],
      }),
    chains: z
      .array(z.union([z.string().min(1).max(100), z.number().int().nonnegative()]))
      .optional()
      .openapi({
        description: "Chains (id or name) the key may act on; absent = all",
        example: [8453, "base-sepolia"],
      }),
    expiresAt: z.iso.datetime({ offset: true }).optional().openapi({
      example: "2027-01-01T00:00:00Z",
      description: "When the key stops working; in the future (else 400)",
    }),
    approval: ApprovalRuleSchema.optional().openapi({
      description:
        "Writes of the key that wait for a decision; a key made by a key with a rule carries at least that rule (absent: inherited; looser: 403)",
    }),
  })
  .strict()
  .openapi("CreateAccessKeyRequest", {
    example: {
      name: "shop",
      scopes: ["nft:mint", "nft:read"],
      collections: ["0x5FbDB2315678afecb367f032d93F642f64180aa3"],
    },
  });

export const AccessKeyView = z
  .object({
    id: z.string().openapi({ example: "ak_3f9a1c0d2b4e6f8a0c1e3d5b" }),
    name: z.string(),
    scopes: z.array(ScopeSchema),
    wallets: z.array(z.string()).optional(),
    collections: z.array(z.string()).optional(),
    chains: z.array(z.string()).optional().openapi({ description: "Chain ids the key may act on; absent = all" }),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    expiresAt: z.string().nullable(),
    createdBy: z
      .string()
      .nullable()
      .openapi({ description: "The id of the key that made it; null: the root key (API_KEY)" }),
    approval: ApprovalRuleSchema.optional(),
  })
  .openapi("AccessKey");

export const CreatedAccessKey = AccessKeyView.extend({
  key: z.string().openapi({ description: "The secret, shown this once: nfto_ then 43 base64url characters." }),
}).openapi("CreatedAccessKey");

export const AccessKeyParams = z.object({ id: z.string().openapi({ example: "ak_3f9a1c0d2b4e6f8a0c1e3d5b" }) });

export const AuditEventView = z
  .object({
    id: z.string(),
    at: z.string(),
    action: z.string().openapi({ example: "access-key.created" }),
    targetType: z.string(),
    targetId: z.string(),
    details: z.record(z.string(), z.unknown()),
    keyId: z.string().nullable(),
    keyName: z.string(),
    clientAddress: z.string(),
  })
  .openapi("AuditEvent");

const MAX_BIGINT = 2n ** 63n - 1n;

export const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  // An event id (bigint): a larger number would reach the store as an out-of-range bigint, a 500.
  cursor: z
    .string()
    .max(19)
    .regex(decimalRange(0n, MAX_BIGINT), "cursor must come from a previous page")
    .optional()
    .openapi({ description: "The `cursor` of the previous page" }),
});
