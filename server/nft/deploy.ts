import { z } from "zod";
import { chainField } from "../http/fields";
import { DEFAULT_COLLECTION, deployTransaction } from "../chain/collection";
import { writeResponseSchema } from "../engine";
import { address, nftBody, signerFields, uint } from "./fields";
import { MAX_ROYALTY_BPS } from "./set-royalty";
import { defineWrite } from "./route";

/** A bigint default, as the document shows it: a decimal string (JSON has no bigint). */
const documentedDefault = (value: bigint) => ({ default: value.toString() });

export const deployRoute = defineWrite({
  path: "/nft/deploy",
  operation: "deploy",
  access: { scope: "nft:deploy", key: "open" },
  summary: "Deploy a new reference collection owned by the caller (extension)",
  description:
    "Every field but privateKey (or from) is optional; contractAddress, if sent, is ignored. A pending deployment answers the address the collection will have.",
  body: nftBody({
    ...signerFields,
    chain: chainField,
    contractAddress: z
      .string()
      .optional()
      .openapi({ description: "Ignored: the new collection's address is answered" }),
    name: z.string().min(1).max(100).default(DEFAULT_COLLECTION.name),
    symbol: z.string().min(1).max(20).default(DEFAULT_COLLECTION.symbol),
    baseURI: z.string().max(2000).default(DEFAULT_COLLECTION.baseURI),
    cost: uint("cost").default(DEFAULT_COLLECTION.cost).openapi(documentedDefault(DEFAULT_COLLECTION.cost)),
    maxSupply: uint("maxSupply")
      .refine((v) => v >= 1n, "maxSupply must be ≥ 1")
      .default(DEFAULT_COLLECTION.maxSupply)
      .openapi(documentedDefault(DEFAULT_COLLECTION.maxSupply)),
    maxMintAmountPerTx: uint("maxMintAmountPerTx")
      .refine((v) => v >= 1n, "maxMintAmountPerTx must be ≥ 1")
      .default(DEFAULT_COLLECTION.maxMintAmountPerTx)
      .openapi(documentedDefault(DEFAULT_COLLECTION.maxMintAmountPerTx)),
    royaltyReceiver: address("royaltyReceiver")
      .optional()
      .openapi({ description: "ERC-2981: the address royalties are paid to (unset = no royalty)" }),
    royaltyBps: uint("royaltyBps")
      .refine((v) => v <= MAX_ROYALTY_BPS, `royaltyBps must be 0 to ${MAX_ROYALTY_BPS} (10%)`)
      .optional()
      .openapi({ description: "The royalty in basis points of the sale price, 0 to 1000 (needs royaltyReceiver)" }),
    voucherSigner: address("voucherSigner")
      .optional()
      .openapi({ description: "The address whose EIP-712 signature makes a mint voucher valid (unset = none)" }),
  })
    .superRefine((body, ctx) => {
      if (body.royaltyBps !== undefined && body.royaltyReceiver === undefined)
        ctx.addIssue({ code: "custom", path: ["royaltyReceiver"], message: "royaltyBps needs royaltyReceiver" });
    })
    .openapi("DeployRequest"),
  response: writeResponseSchema({ owner: z.string() }).openapi("DeployResponse"),
  successStatus: 201,
  errors: ["INSUFFICIENT_FUNDS", "CONTRACT_REVERTED"],
  async plan(input) {
    const { contractAddress: _ignored, ...params } = input;
    const tx = await deployTransaction(params);
    return { call: { data: tx.data }, context: {} };
  },
  result: (_receipt, op) => ({ owner: op.from }),
});
