import { z } from "zod";
import { ZeroAddress } from "ethers";
import { chainField, paymentTokenView } from "../http/fields";
import { DEFAULT_COLLECTION, deployTransaction } from "../chain/collection";
import { editionsDeployTransaction } from "../chain/editions";
import { requirePaymentToken } from "../chain/payment-token";
import { writeResponseSchema } from "../engine";
import { invalid, parseBody } from "../http/validation";
import { address, nftBody, signerFields, uint } from "./fields";
import { MAX_ROYALTY_BPS } from "./set-royalty";
import { defineWrite } from "./route";

/** A bigint default, as the document shows it: a decimal string (JSON has no bigint). */
const documentedDefault = (value: bigint) => ({ default: value.toString() });

/** What a deployment can be: an ERC-721 collection (the reference one), or ERC-1155 editions (NFTEditions). */
const standard = z.enum(["erc721", "erc1155"], { error: 'standard must be "erc721" or "erc1155"' }).openapi({
  description:
    'What to deploy: "erc721" (default), the reference collection; "erc1155", editions (NFTEditions: name, symbol, baseURI and royalty; each edition\'s price and caps come with POST /nft/createEdition)',
  example: "erc1155",
});

/** ERC-721 settings an editions contract has per edition (createEdition), or not at all (vouchers). */
const ERC721_ONLY_FIELDS = ["cost", "maxSupply", "maxMintAmountPerTx", "voucherSigner"] as const;

const deployBody = nftBody({
  ...signerFields,
  chain: chainField,
  standard: standard.optional(),
  contractAddress: z.string().optional().openapi({ description: "Ignored: the new collection's address is answered" }),
  name: z.string().min(1).max(100).default(DEFAULT_COLLECTION.name),
  symbol: z.string().min(1).max(20).default(DEFAULT_COLLECTION.symbol),
  baseURI: z.string().max(2000).default(DEFAULT_COLLECTION.baseURI),
  cost: uint("cost").default(DEFAULT_COLLECTION.cost).openapi(documentedDefault(DEFAULT_COLLECTION.cost)),
  maxSupply: uint("maxSupply", { min: 1n })
    .default(DEFAULT_COLLECTION.maxSupply)
    .openapi(documentedDefault(DEFAULT_COLLECTION.maxSupply)),
  maxMintAmountPerTx: uint("maxMintAmountPerTx", { min: 1n })
    .default(DEFAULT_COLLECTION.maxMintAmountPerTx)
    .openapi(documentedDefault(DEFAULT_COLLECTION.maxMintAmountPerTx)),
  royaltyReceiver: address("royaltyReceiver")
    .optional()
    .openapi({ description: "ERC-2981: the address royalties are paid to (unset = no royalty)" }),
  royaltyBps: uint("royaltyBps", { max: MAX_ROYALTY_BPS })
    .optional()
    .openapi({ description: "The royalty in basis points of the sale price, 0 to 1000 (needs royaltyReceiver)" }),
  voucherSigner: address("voucherSigner")
    .optional()
    .openapi({ description: "The address whose EIP-712 signature makes a mint voucher valid (unset = none)" }),
  paymentToken: address("paymentToken").optional().openapi({
    description:
      "The ERC-20 prices are in (cost, and each edition's, in its smallest unit); a contract answering symbol() and decimals(), checked before anything is sent. Unset or 0x0000000000000000000000000000000000000000: the native coin",
  }),
})
  .superRefine((body, ctx) => {
    if (body.royaltyBps !== undefined && body.royaltyReceiver === undefined)
      ctx.addIssue({ code: "custom", path: ["royaltyReceiver"], message: "royaltyBps needs royaltyReceiver" });
  })
  // The superRefine's rule and parse's (no ERC-721 field with erc1155), where a client reads them.
  .openapi("DeployRequest", {
    dependentRequired: { royaltyBps: ["royaltyReceiver"] },
    if: { properties: { standard: { const: "erc1155" } }, required: ["standard"] },
    then: { not: { anyOf: ERC721_ONLY_FIELDS.map((f) => ({ required: [f] })) } },
  } as object);

export const deployRoute = defineWrite({
  path: "/nft/deploy",
  operation: "deploy",
  access: { scope: "nft:deploy", key: "open" },
  summary:
    "Deploy a new reference collection (ERC-721) or editions contract (ERC-1155) owned by the caller (extension)",
  description:
    'Every field but privateKey (or from) is optional; contractAddress, if sent, is ignored. A pending deployment answers the address the collection will have. With "standard":"erc1155" it deploys ERC-1155 editions (NFTEditions), which take name, symbol, baseURI and the royalty fields only (400 for cost, maxSupply, maxMintAmountPerTx or voucherSigner: those are per edition, POST /nft/createEdition); the answer then carries "standard", as it does whenever the request names one. `paymentToken` prices the contract in an ERC-20 from its deployment (its constructor sets it, with the PaymentTokenChanged event; `cost` is then in the smallest unit of the token): an address that is not a contract answering ERC-20 symbol() and decimals() is 400 VALIDATION_ERROR naming paymentToken, before anything is sent. The answer then carries "paymentToken":{"address","symbol","decimals"}, as the answer of a mint does (absent for the native coin); POST /nft/setPaymentToken changes it later.',
  body: deployBody,
  // The defaults above are filled in by the schema: whether an ERC-721 field was sent is read from the raw body.
  parse(body) {
    const raw = body as Record<string, unknown> | null;
    if (raw && typeof raw === "object" && raw.standard === "erc1155") {
      const sent = ERC721_ONLY_FIELDS.filter((field) => raw[field] !== undefined);
      if (sent.length > 0)
        throw invalid(
          sent.map((field) => ({
            path: field,
            message:
              field === "voucherSigner"
                ? "vouchers are ERC-721 only; this deploys an ERC-1155 editions contract (standard erc1155)"
                : `an ERC-1155 editions contract (standard erc1155) has no ${field} of its own: each edition sets it (POST /nft/createEdition)`,
          })),
        );
    }
    return parseBody(deployBody, body);
  },
  response: writeResponseSchema({
    owner: z.string(),
    standard: standard
      .optional()
      .openapi({ description: "What was deployed; answered when the request names a standard" }),
    paymentToken: paymentTokenView.optional(),
  }).openapi("DeployResponse"),
  successStatus: 201,
  errors: ["INSUFFICIENT_FUNDS", "CONTRACT_REVERTED"],
  async plan(input, { chain }) {
    const { contractAddress: _ignored, standard, paymentToken: token, ...params } = input;
    // The token is checked here, before anything is signed: the constructor would take any contract.
    const paymentToken =
      token === undefined || token === ZeroAddress
        ? undefined
        : await requirePaymentToken(chain, token, "paymentToken");
    const constructed = { ...params, paymentToken: paymentToken?.address };
    const tx =
      standard === "erc1155" ? await editionsDeployTransaction(constructed) : await deployTransaction(constructed);
    // A request without `standard` (or without a token) answers as it did before editions (or tokens) existed.
    return {
      call: { data: tx.data },
      context: { ...(standard ? { standard } : {}), ...(paymentToken ? { paymentToken } : {}) },
    };
  },
  result: (_receipt, op) => ({
    owner: op.from,
    ...(op.context.standard ? { standard: op.context.standard } : {}),
    ...(op.context.paymentToken ? { paymentToken: op.context.paymentToken } : {}),
  }),
});
