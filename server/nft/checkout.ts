import { z } from "zod";
import { ApiError } from "../http/errors";
import { paymentTokenView } from "../http/fields";
import { address, chainField, decimal, uint } from "./fields";
import { permitTypedData, readPermitToken } from "./permit";
import { defineRead } from "./route";
import { editionTokenId } from "./standard";
import { chainNow, tokenSale } from "./token-sale";

/** How long a checkout's permit stays valid when the request names no deadline. */
export const DEFAULT_PERMIT_SECONDS = 30n * 60n;

const checkoutBody = z
  .strictObject({
    contractAddress: address("contractAddress"),
    chain: chainField,
    tokenId: editionTokenId,
    buyer: address("buyer").openapi({ description: "Who signs the permit, pays the price and receives the tokens" }),
    mintAmount: uint("mintAmount", { min: 1n }),
    deadline: uint("deadline")
      .optional()
      .openapi({ description: "The permit's deadline, unix seconds (default: 30 minutes from now)" }),
  })
  .openapi("CheckoutRequest");

const typedValue = z.union([z.string(), z.number()]);

export const checkoutRoute = defineRead({
  path: "/nft/checkout",
  operation: "checkout",
  access: { scope: "nft:mint", key: "open", bodyCollection: "contractAddress" },
  signerless: true,
  summary: "The EIP-2612 permit a buyer signs to pay a token-priced mint (no transaction)",
  description:
    "A read: no signer in the body, nothing is sent. The answer is the EIP-712 typed data for the buyer's eth_signTypedData_v4 (ethers: signTypedData(domain, types without EIP712Domain, message)): a permit of the price (cost × mintAmount, in the payment token's smallest unit) to the collection, at the token's current nonces(buyer), with numbers as decimal strings. Its signature goes to POST /nft/mintWithPermit with the same buyer, mintAmount and deadline. A collection priced in the native coin is 400 VALIDATION_ERROR naming paymentToken (mint with POST /nft/mint, or set a payment token); a token without EIP-2612 is 422 PERMIT_UNSUPPORTED; a deadline already past 400 PERMIT_EXPIRED.",
  body: checkoutBody,
  response: z
    .object({
      domain: z.record(z.string(), typedValue).openapi({
        description:
          "The token's EIP-712 domain (EIP-5267 eip712Domain(), else name(), version 1, the chain, the token)",
      }),
      types: z.record(z.string(), z.array(z.object({ name: z.string(), type: z.string() }))),
      primaryType: z.literal("Permit"),
      message: z.object({ owner: z.string(), spender: z.string(), value: decimal, nonce: decimal, deadline: decimal }),
      paymentToken: paymentTokenView,
    })
    .openapi("CheckoutResponse"),
  errors: [
    "PERMIT_EXPIRED",
    "PERMIT_UNSUPPORTED",
    "CONTRACT_NOT_FOUND",
    "TOKEN_NOT_FOUND",
    "INVALID_MINT_AMOUNT",
    "UNSUPPORTED_CONTRACT",
  ],
  async handle(input, { chain }) {
    const now = await chainNow(chain);
    const deadline = input.deadline ?? now + DEFAULT_PERMIT_SECONDS;
    if (deadline < now)
      throw new ApiError("PERMIT_EXPIRED", `deadline ${deadline} has passed: give a later one, or none (30 minutes)`);
    const sale = await tokenSale(chain, input);
    const { domain, nonce } = await readPermitToken(chain, sale.paymentToken, input.buyer);
    const terms = { buyer: input.buyer, spender: input.contractAddress, value: sale.value, nonce, deadline };
    return { ...permitTypedData(domain, terms), paymentToken: sale.paymentToken };
  },
});
