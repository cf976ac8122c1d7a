import { z } from "zod";
import { chainStatus } from "../../chains/known-head";
import { chainField } from "../../http/fields";
import { address, decimal, privateKey, uint } from "../../http/fields";

const LABEL = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const ADDRESS_LIKE = /^0x[0-9a-fA-F]{40}$/;

/** A wallet's name in `from`: never shaped like an address, so `from` always means one or the other. */
export const WalletLabel = z
  .string()
  .regex(LABEL, "label must be 1-64 characters of A-Z a-z 0-9 _ . -, starting with a letter or digit")
  .refine((v) => !ADDRESS_LIKE.test(v), "label must not look like an address")
  .openapi({ example: "treasury" });

/** A wei amount, or null to remove the limit. */
const weiOrNull = (name: string) => uint(name).nullable();

const LocalWallet = z
  .object({
    kind: z.literal("local"),
    label: WalletLabel,
    privateKey: privateKey
      .optional()
      .openapi({ description: "Import this key (else the service makes one). Never returned." }),
    keystore: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "Import an Ethereum JSON keystore (Web3 Secret Storage v3: geth, Foundry, ethers)" }),
    password: z.string().max(1024).optional().openapi({ description: "The keystore's password. Never returned." }),
  })
  .strict()
  .superRefine((body, ctx) => {
    if (body.privateKey !== undefined && body.keystore !== undefined)
      ctx.addIssue({ code: "custom", path: ["keystore"], message: "give privateKey or keystore, not both" });
    if (body.keystore !== undefined && body.password === undefined)
      ctx.addIssue({ code: "custom", path: ["password"], message: "a keystore needs its password" });
    if (body.keystore === undefined && body.password !== undefined)
      ctx.addIssue({ code: "custom", path: ["password"], message: "password goes with a keystore" });
  })
  // The superRefine's rules, where a client reads them.
  .openapi({
    dependentRequired: { keystore: ["password"], password: ["keystore"] },
    not: { required: ["privateKey", "keystore"] },
  } as object);

const Pkcs11Wallet = z
  .object({
    kind: z.literal("pkcs11").openapi({
      description: "Needs a PKCS#11 token configured (PKCS11_MODULE, PKCS11_TOKEN_LABEL, PKCS11_PIN); else 400",
    }),
    label: WalletLabel,
    keyLabel: z
      .string()
      .min(1)
      .max(128)
      .refine((v) => !v.includes("\0"), "must not contain NUL")
      .openapi({ description: "CKA_LABEL of a secp256k1 key pair in the PKCS#11 token", example: "treasury-key" }),
  })
  .strict();

export const CreateWalletRequest = z
  .discriminatedUnion("kind", [LocalWallet, Pkcs11Wallet])
  .openapi("CreateWalletRequest", {
    example: { kind: "local", label: "treasury" },
  });

export const CreatedWallet = z
  .object({
    address: z.string().openapi({ example: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" }),
    label: z.string().openapi({ example: "treasury" }),
    kind: z.enum(["local", "pkcs11"]),
    keyLabel: z.string().optional().openapi({ description: "pkcs11 wallets: the key's label in the token" }),
    createdAt: z.string(),
  })
  .openapi("CreatedWallet");

export const WalletPolicy = z
  .object({
    dailySpendLimit: decimal
      .nullable()
      .openapi({ description: "wei of value plus gas at the signed max fee, per UTC day" }),
    lowBalance: decimal
      .nullable()
      .openapi({ description: "wei; below it the wallet.low_balance webhook fires (once per crossing)" }),
    spentToday: decimal.openapi({ description: "wei committed today (UTC) against dailySpendLimit" }),
  })
  .openapi("WalletPolicy");

export const UpdatedWallet = CreatedWallet.extend({
  // Left out when no one chain is meant (several configured, none named): the answer says no chain's.
  policy: WalletPolicy.optional().openapi({
    description:
      "The named chain's (or the only chain's) policy now; absent when several chains are configured and none is named",
  }),
}).openapi("UpdatedWallet");

/**
 * The chain fields are those of the chain `?chain=` names (or the only one); with several chains
 * and none named they are absent (GET /wallets/{address}'s `chains` has every chain's).
 */
export const WalletView = CreatedWallet.extend({
  chainId: z.string().optional().openapi({ description: "The chain the balance, nonce and policy below are of" }),
  balance: decimal.optional().openapi({ description: "wei, from the chain" }),
  nextNonce: z.number().int().optional(),
  unfinishedOperations: z
    .number()
    .int()
    .optional()
    .openapi({ description: "operations of the wallet still queued or sent" }),
  policy: WalletPolicy.optional(),
  chainStatus,
}).openapi("Wallet");

/** One wallet on one chain; balance and nextNonce are null while the chain does not answer. */
export const WalletOnChain = z
  .object({
    chainId: z.string(),
    balance: decimal.nullable(),
    nextNonce: z.number().int().nullable(),
    unfinished: z.number().int(),
    spentToday: decimal,
    dailySpendLimit: decimal.nullable(),
    lowBalance: decimal.nullable(),
    chainStatus,
  })
  .openapi("WalletOnChain");

export const WalletDetail = WalletView.extend({
  unfinishedOperationIds: z.array(z.string()).openapi({ description: "oldest first, at most 100" }),
  chains: z.array(WalletOnChain).openapi({ description: "The wallet on every configured chain" }),
}).openapi("WalletDetail");

const ChainPolicy = z
  .object({
    dailySpendLimit: weiOrNull("dailySpendLimit").optional(),
    lowBalance: weiOrNull("lowBalance").optional(),
  })
  .strict();

export const UpdateWalletRequest = z
  .object({
    label: WalletLabel.optional(),
    dailySpendLimit: weiOrNull("dailySpendLimit").optional(),
    lowBalance: weiOrNull("lowBalance").optional(),
    chain: chainField.openapi({
      description:
        "The chain dailySpendLimit and lowBalance are for; unset: the only chain, or every chain (*) with several",
    }),
    policy: z
      .record(z.string().min(1).max(100), ChainPolicy)
      .optional()
      .openapi({
        description: 'Policies by chain id or name; "*" for every chain without its own',
        example: { "8453": { dailySpendLimit: "1000000000000000000" }, "*": { lowBalance: "0" } },
      }),
  })
  .strict()
  .refine((body) => Object.keys(body).length > 0, "give at least one of label, dailySpendLimit, lowBalance, policy")
  .openapi("UpdateWalletRequest", {
    minProperties: 1,
    example: { dailySpendLimit: "1000000000000000000", lowBalance: "100000000000000000" },
  });

export const WalletParams = z.object({ address: address("address") });
