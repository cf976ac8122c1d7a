import { Signature } from "ethers";
import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { editionsCalls } from "../chain/editions-abi";
import { writeResponseSchema } from "../engine";
import { ApiError } from "../http/errors";
import { paymentTokenView } from "../http/fields";
import { address, common, decimal, nftBody, uint } from "./fields";
import { checkPermit } from "./permit-check";
import { checkBalance } from "./payer";
import { readPermitToken } from "./permit";
import { mintedTokenIds } from "./receipt-events";
import { MINT_REFUSALS } from "./mint";
import { defineWrite } from "./route";
import { editionTokenId } from "./standard";
import { chainNow, tokenSale } from "./token-sale";

export const mintWithPermitRoute = defineWrite({
  path: "/nft/mintWithPermit",
  operation: "mintWithPermit",
  access: { scope: "nft:mint", key: "open", bodyCollection: "contractAddress" },
  summary: "Mint to a buyer who pays the token price with an EIP-2612 permit; the sender pays only the gas",
  description:
    "The permit is the one POST /nft/checkout answered, signed by `buyer`, with the same mintAmount and deadline. The wallet `from` (or privateKey) sends mintWithPermit and pays the gas under its spend limits; the contract takes the price from the buyer and mints to the buyer. Checked before anything is sent: a past deadline 400 PERMIT_EXPIRED; a signature that does not recover to buyer at the token's current nonces(buyer) 400 INVALID_SIGNATURE (a permit someone else already applied still mints while the allowance it set covers the price; once that is spent, 400 naming the nonce); the buyer's token balance short of the price 402 INSUFFICIENT_TOKEN_BALANCE; a token without permit 422 PERMIT_UNSUPPORTED; a collection priced in the native coin 400 VALIDATION_ERROR naming paymentToken. Then the simulation's 409s (paused, max supply, not whitelisted).",
  body: nftBody({
    ...common,
    tokenId: editionTokenId,
    buyer: address("buyer").openapi({ description: "Who signed the permit, pays and receives the tokens" }),
    mintAmount: uint("mintAmount", { min: 1n }),
    deadline: uint("deadline").openapi({ description: "The permit's deadline, unix seconds, as signed" }),
    signature: z
      .string()
      .regex(/^0x[0-9a-fA-F]{130}$/, "signature must be 65 bytes of hex (0x…): the buyer's eth_signTypedData_v4")
      .openapi({ description: "The buyer's signature of the checkout's typed data (65 bytes, hex)" }),
  }).openapi("MintWithPermitRequest"),
  response: writeResponseSchema({
    buyer: z.string(),
    tokenIds: z.array(decimal).optional().openapi({ description: "ERC-721: the ids minted to the buyer" }),
    tokenId: decimal.optional().openapi({ description: "ERC-1155: the edition minted" }),
    amount: decimal.optional().openapi({ description: "ERC-1155: how many tokens of the edition were minted" }),
    value: decimal.openapi({ description: "The price the buyer paid, in the payment token's smallest unit" }),
    paymentToken: paymentTokenView,
  }).openapi("MintWithPermitResponse"),
  errors: [
    "PERMIT_EXPIRED",
    "INVALID_SIGNATURE",
    "INSUFFICIENT_TOKEN_BALANCE",
    "PERMIT_UNSUPPORTED",
    "TOKEN_ALLOWANCE_TOO_LOW",
    "INSUFFICIENT_FUNDS",
    ...MINT_REFUSALS,
  ],
  async plan(input, { chain }) {
    if (input.deadline < (await chainNow(chain)))
      throw new ApiError(
        "PERMIT_EXPIRED",
        `The permit's deadline ${input.deadline} has passed: the buyer signs a new one (POST /nft/checkout)`,
      );
    const sale = await tokenSale(chain, input);
    const permitToken = await readPermitToken(chain, sale.paymentToken, input.buyer);
    await checkPermit(chain, permitToken, {
      buyer: input.buyer,
      spender: input.contractAddress,
      value: sale.value,
      nonce: permitToken.nonce,
      deadline: input.deadline,
      signature: input.signature,
    });
    await checkBalance(chain, sale.paymentToken, input.buyer, sale.value);
    const { v, r, s } = Signature.from(input.signature);
    const { buyer, mintAmount, deadline, contractAddress: to } = input;
    const paid = { buyer, value: sale.value.toString(), paymentToken: sale.paymentToken };
    if (sale.tokenId !== undefined)
      return {
        call: {
          to,
          data: editionsCalls().encodeFunctionData("mintWithPermit", [
            buyer,
            mintAmount,
            sale.tokenId,
            deadline,
            v,
            r,
            s,
          ]),
        },
        context: { ...paid, tokenId: sale.tokenId.toString(), amount: mintAmount.toString() },
      };
    return {
      call: {
        to,
        data: collectionCalls().encodeFunctionData("mintWithPermit", [buyer, mintAmount, deadline, v, r, s]),
      },
      context: paid,
    };
  },
  result: (receipt, op) => {
    const { buyer, value, paymentToken, tokenId, amount } = op.context;
    return tokenId !== undefined
      ? { buyer, tokenId, amount, value, paymentToken }
      : { buyer, tokenIds: mintedTokenIds(receipt, op.contractAddress!), value, paymentToken };
  },
});
