import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { editionsCalls } from "../chain/editions-abi";
import { writeResponseSchema } from "../engine";
import type { ErrorCode } from "../http/errors";
import { paymentTokenView } from "../http/fields";
import { common, decimal, uint, nftBody } from "./fields";
import { checkPayer } from "./payer";
import { priceOf } from "./price";
import { mintedTokenIds } from "./receipt-events";
import { defineWrite } from "./route";
import { editionTokenId, tokenIdFor } from "./standard";

/** What the collection refuses a mint for, however it is paid (mint, mintWithPermit). */
export const MINT_REFUSALS: ErrorCode[] = [
  "NOT_WHITELISTED",
  "CONTRACT_NOT_FOUND",
  "CONTRACT_PAUSED",
  "MAX_SUPPLY_EXCEEDED",
  "INVALID_MINT_AMOUNT",
  "TOKEN_NOT_FOUND",
  "UNSUPPORTED_CONTRACT",
  "CONTRACT_REVERTED",
];

export const mintRoute = defineWrite({
  path: "/nft/mint",
  operation: "mint",
  access: { scope: "nft:mint", key: "open", bodyCollection: "contractAddress" },
  summary: "Mint tokens to the caller, paying cost × mintAmount",
  description:
    "The price is read from the contract and sent as the transaction's value. On a collection priced in an ERC-20 (`paymentToken` in the answer), nothing is sent with the call: the contract takes cost × mintAmount of the token from the signer, who must hold it (else 402 INSUFFICIENT_TOKEN_BALANCE) and have approved the collection for it (else 409 TOKEN_ALLOWANCE_TOO_LOW naming the spender and the amount), both checked before anything is sent; a buyer without ETH pays with a permit instead (POST /nft/checkout, then POST /nft/mintWithPermit). On an ERC-1155 editions contract, `tokenId` names the edition (required there, refused on an ERC-721) and the answer carries `tokenId` and `amount` instead of `tokenIds`.",
  body: nftBody({ ...common, tokenId: editionTokenId, mintAmount: uint("mintAmount") }).openapi("MintRequest"),
  response: writeResponseSchema({
    tokenIds: z.array(decimal).optional().openapi({ description: "ERC-721: the ids minted" }),
    tokenId: decimal.optional().openapi({ description: "ERC-1155: the edition minted" }),
    amount: decimal.optional().openapi({ description: "ERC-1155: how many tokens of the edition were minted" }),
    value: decimal.openapi({ description: "The price paid: wei, or the payment token's smallest unit" }),
    paymentToken: paymentTokenView.optional(),
  }).openapi("MintResponse"),
  errors: [
    "INSUFFICIENT_FUNDS",
    "INSUFFICIENT_TOKEN_BALANCE",
    "TOKEN_ALLOWANCE_TOO_LOW",
    "INCORRECT_PAYMENT",
    ...MINT_REFUSALS,
  ],
  async plan(input, { chain, signer }) {
    const { tokenId } = await tokenIdFor(chain, input.contractAddress, input.tokenId);
    const { value: price, paymentToken } = await priceOf(chain, input.contractAddress, tokenId, input.mintAmount);
    // A token price is pulled from the signer by the contract: no ether goes with the call.
    if (paymentToken) await checkPayer(chain, paymentToken, signer.address, input.contractAddress, price);
    const value = paymentToken ? 0n : price;
    const paid = { value: price.toString(), ...(paymentToken ? { paymentToken } : {}) };
    if (tokenId !== undefined)
      return {
        call: {
          to: input.contractAddress,
          data: editionsCalls().encodeFunctionData("mint", [tokenId, input.mintAmount]),
          value,
        },
        context: { tokenId: tokenId.toString(), amount: input.mintAmount.toString(), ...paid },
      };
    return {
      call: {
        to: input.contractAddress,
        data: collectionCalls().encodeFunctionData("mint", [input.mintAmount]),
        value,
      },
      context: paid,
    };
  },
  // An edition's mint creates exactly `amount` tokens of its id, or reverts.
  result: (receipt, op) => {
    const paid = {
      value: op.context.value,
      ...(op.context.paymentToken ? { paymentToken: op.context.paymentToken } : {}),
    };
    return op.context.tokenId !== undefined
      ? { tokenId: op.context.tokenId, amount: op.context.amount, ...paid }
      : { tokenIds: mintedTokenIds(receipt, op.contractAddress!), ...paid };
  },
});
