import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { editionsCalls } from "../chain/editions-abi";
import { writeResponseSchema } from "../engine";
import { address, common, decimal, nftBody, uint } from "./fields";
import { mintedTokenIds } from "./receipt-events";
import { defineWrite } from "./route";
import { editionTokenId, tokenIdFor } from "./standard";

export const mintForFreeRoute = defineWrite({
  path: "/nft/mintForFree",
  operation: "mintForFree",
  access: { scope: "nft:mintForFree", key: "open", bodyCollection: "contractAddress" },
  summary: "Mint tokens at no cost (owner only; works while paused)",
  description:
    "On an ERC-1155 editions contract, `tokenId` names the edition (required there, refused on an ERC-721) and the answer carries `tokenId` and `amount` instead of `tokenIds`.",
  body: nftBody({
    ...common,
    tokenId: editionTokenId,
    mintAmount: uint("mintAmount"),
    receiver: address("receiver").optional(),
  }).openapi("MintForFreeRequest"),
  response: writeResponseSchema({
    tokenIds: z.array(decimal).optional().openapi({ description: "ERC-721: the ids minted" }),
    tokenId: decimal.optional().openapi({ description: "ERC-1155: the edition minted" }),
    amount: decimal.optional().openapi({ description: "ERC-1155: how many tokens of the edition were minted" }),
    receiver: z.string(),
  }).openapi("MintForFreeResponse"),
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "MAX_SUPPLY_EXCEEDED",
    "INVALID_MINT_AMOUNT",
    "TOKEN_NOT_FOUND",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { chain, signer }) {
    const receiver = input.receiver ?? signer.address;
    const { tokenId } = await tokenIdFor(chain, input.contractAddress, input.tokenId);
    if (tokenId !== undefined)
      return {
        call: {
          to: input.contractAddress,
          data: editionsCalls().encodeFunctionData("mintForFree", [tokenId, input.mintAmount, receiver]),
        },
        context: { tokenId: tokenId.toString(), amount: input.mintAmount.toString(), receiver },
      };
    return {
      call: {
        to: input.contractAddress,
        data: collectionCalls().encodeFunctionData("mintForFree", [input.mintAmount, receiver]),
      },
      context: { receiver },
    };
  },
  result: (receipt, op) =>
    op.context.tokenId !== undefined
      ? { tokenId: op.context.tokenId, amount: op.context.amount, receiver: op.context.receiver }
      : { tokenIds: mintedTokenIds(receipt, op.contractAddress!), receiver: op.context.receiver },
});
