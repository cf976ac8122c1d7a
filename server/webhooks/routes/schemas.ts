import { z } from "zod";
import { address, collectionEntryField } from "../../http/fields";
import { EVENT_TYPES, TEST_EVENT_TYPE } from "../events";

export const EventTypeSchema = z.enum(EVENT_TYPES).openapi({ example: "operation.confirmed" });

const url = z
  .string()
  .min(1)
  .max(2048)
  // The guard's rules, where a client reads them: an http(s) URL (WHATWG-parsed there).
  .regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\//, "must be http:// or https://")
  .refine((v) => !v.includes("\0"), "must not contain NUL")
  .openapi({
    format: "uri",
    example: "https://shop.example/hooks/nft",
    description:
      "http(s) URL whose host resolves (400 VALIDATION_ERROR when its name has no address). Refused (400 WEBHOOK_URL_FORBIDDEN) when it resolves to a loopback, private, link-local or cloud metadata address, unless WEBHOOK_ALLOW_PRIVATE=true (loopback and private only).",
  });

const addresses = (name: string) =>
  z
    .array(address(`${name}[]`))
    .min(1)
    .max(1000);

/** Collections: an address (every chain) or "<chain>:<address>" (a chain id or name), as a key's limit. */
const collectionEntries = z.array(collectionEntryField).min(1).max(1000);

/** Chains by id (a number or a decimal string), kept as decimal strings. */
const chainIds = z
  .array(
    z
      .union([z.string().regex(/^\d{1,20}$/, "must be a chain id"), z.number().int().nonnegative()])
      .transform((c) => BigInt(c).toString()),
  )
  .min(1)
  .max(100);

export const CreateWebhookRequest = z
  .object({
    url,
    events: z.array(EventTypeSchema).min(1),
    collections: collectionEntries.optional().openapi({
      description:
        'Only events about these collections: an address (on every chain) or "<chain>:<address>" (that chain only). wallet.low_balance is about none: it is left out. Absent = every collection the key reads',
      example: ["0x5FbDB2315678afecb367f032d93F642f64180aa3", "base:0x5FbDB2315678afecb367f032d93F642f64180aa3"],
    }),
    wallets: addresses("wallets").optional().openapi({
      description:
        "Only events about these wallets (an operation's sender, the wallet of a wallet.low_balance, a transfer's from or to); absent = all",
    }),
    chains: chainIds.optional().openapi({ description: "Only events of these chains (by id); absent = every chain" }),
    enabled: z.boolean().optional().openapi({ description: "Default true" }),
  })
  .strict()
  .openapi("CreateWebhookRequest", {
    example: {
      url: "https://shop.example/hooks/nft",
      events: ["operation.confirmed", "operation.failed"],
      collections: ["0x5FbDB2315678afecb367f032d93F642f64180aa3"],
    },
  });

export const UpdateWebhookRequest = z
  .object({
    url: url.optional(),
    events: z.array(EventTypeSchema).min(1).optional(),
    collections: collectionEntries.nullable().optional().openapi({
      description: 'An address (every chain) or "<chain>:<address>"; null removes the filter',
    }),
    wallets: addresses("wallets").nullable().optional().openapi({ description: "null removes the filter" }),
    chains: chainIds.nullable().optional().openapi({ description: "null removes the filter" }),
    enabled: z.boolean().optional().openapi({ description: "false stops deliveries; true starts them again" }),
  })
  .strict()
  .openapi("UpdateWebhookRequest", { example: { enabled: false } });

export const WebhookView = z
  .object({
    id: z.string().openapi({ example: "wh_6c1f0a2b3d4e5f60718293a4" }),
    url: z.string(),
    events: z.array(EventTypeSchema),
    collections: z.array(z.string()).optional(),
    wallets: z.array(z.string()).optional(),
    chains: z.array(z.string()).optional(),
    enabled: z.boolean(),
    disabledReason: z.string().nullable().openapi({ example: null }),
    previousSecretExpiresAt: z.string().nullable().openapi({
      description:
        "After a rotation: until when the secrets rotated out still sign beside the current one (each for 24 h after its rotation; this is the last of them)",
    }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Webhook");

export const WebhookWithSecret = WebhookView.extend({
  secret: z.string().openapi({
    description: "whsec_ then base64 of 32 random bytes (Standard Webhooks). Shown this once.",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  }),
}).openapi("WebhookWithSecret");

export const WebhookParams = z.object({ id: z.string().max(100).openapi({ example: "wh_6c1f0a2b3d4e5f60718293a4" }) });

export const DeliveryParams = WebhookParams.extend({
  eventId: z.string().max(100).openapi({ example: "evt_0b6f3c9e2d4a4f1e8c7b5a3d2e1f0a9b" }),
});

export const DeliveryStatusSchema = z.enum(["pending", "delivered", "failed"]);

export const DeliveriesQuery = z.object({
  status: DeliveryStatusSchema.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  cursor: z
    .string()
    .regex(/^\d{1,19}$/, "cursor must come from a previous page")
    .optional(),
});

export const DeliveryView = z
  .object({
    eventId: z.string().openapi({ description: "The webhook-id header of every attempt" }),
    type: z.string().openapi({ example: "operation.confirmed" }),
    status: DeliveryStatusSchema,
    inFlight: z.boolean().openapi({ description: "An attempt is being made now" }),
    attempts: z.number().int(),
    attemptLog: z.array(
      z.object({
        at: z.string(),
        status: z.number().int().optional().openapi({ description: "The receiver's HTTP status" }),
        error: z.string().optional(),
        ms: z.number().int(),
      }),
    ),
    lastStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    lastAttemptAt: z.string().nullable(),
    nextAttemptAt: z.string().nullable().openapi({ description: "The next try of a pending delivery" }),
    deliveredAt: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi("WebhookDelivery");

export const TestEventAccepted = z
  .object({
    eventId: z.string(),
    type: z.literal(TEST_EVENT_TYPE),
  })
  .openapi("WebhookTestEvent");
