import { z } from "zod";
import { SETTLED_TOPICS } from "../chain/chain-client";
import { collectionCalls } from "../chain/collection-abi";
import { editionsCalls } from "../chain/editions-abi";
import { writeResponseSchema } from "../engine";
import { ApiError } from "../http/errors";
import { common, decimal, uint, nftBody } from "./fields";
import { mintedTokenIds } from "./receipt-events";
import { defineWrite } from "./route";
import { editionTokenId, tokenIdFor } from "./standard";

export const mintRoute = defineWrite({
  path: "/nft/mint",
  operation: "mint",
  access: { scope: "nft:mint", key: "open", bodyCollection: "contractAddress" },
  summary: "Mint tokens to the caller, paying cost × mintAmount",
  description:
    "The price is read from the contract and sent as the transaction's value. On an ERC-1155 editions contract, `tokenId` names the edition (required there, refused on an ERC-721) and the answer carries `tokenId` and `amount` instead of `tokenIds`.",
  body: nftBody({ ...common, tokenId: editionTokenId, mintAmount: uint("mintAmount") }).openapi("MintRequest"),
  response: writeResponseSchema({
    tokenIds: z.array(decimal).optional().openapi({ description: "ERC-721: the ids minted" }),
    tokenId: decimal.optional().openapi({ description: "ERC-1155: the edition minted" }),
    amount: decimal.optional().openapi({ description: "ERC-1155: how many tokens of the edition were minted" }),
    value: decimal,
  }).openapi("MintResponse"),
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_WHITELISTED",
    "CONTRACT_NOT_FOUND",
    "CONTRACT_PAUSED",
    "MAX_SUPPLY_EXCEEDED",
    "INVALID_MINT_AMOUNT",
    "TOKEN_NOT_FOUND",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { chain }) {
    const { tokenId } = await tokenIdFor(chain, input.contractAddress, input.tokenId);
    // The price, kept per block until a header may hold its CostChanged (one call fewer a mint).
    const at = input.contractAddress;
    const cost = await chain.read(at, () =>
      tokenId === undefined
        ? chain.settled(at, "cost", SETTLED_TOPICS.cost, () => chain.view(at, "cost", []))
        : chain.settled(at, `cost:${tokenId}`, SETTLED_TOPICS.editionCost, () =>
            chain.viewEdition(at, "cost", [tokenId]),
          ),
    );
    const value = cost * input.mintAmount;
    // Past 256 bits no transaction can carry the price; far above any per-transaction cap.
    if (value >= 2n ** 256n) {
      const max = await (
        tokenId === undefined
          ? chain.view(at, "maxMintAmountPerTx", [])
          : chain.viewEdition(at, "edition", [tokenId]).then((edition) => edition[2])
      ).catch(() => undefined);
      throw new ApiError(
        "INVALID_MINT_AMOUNT",
        max === undefined
          ? `mintAmount ${input.mintAmount} is far above maxMintAmountPerTx: mint fewer per request`
          : `At most ${max} per transaction; ${input.mintAmount} were asked: mint ${max} or fewer per request`,
      );
    }
    if (tokenId !== undefined)
      return {
        call: {
          to: input.contractAddress,
          data: editionsCalls().encodeFunctionData("mint", [tokenId, input.mintAmount]),
          value,
        },
        context: { tokenId: tokenId.toString(), amount: input.mintAmount.toString(), value: value.toString() },
      };
    return {
      call: {
        to: input.contractAddress,
        data: collectionCalls().encodeFunctionData("mint", [input.mintAmount]),
        value,
      },
      context: { value: value.toString() },
    };
  },
  // An edition's mint creates exactly `amount` tokens of its id, or reverts.
  result: (receipt, op) =>
    op.context.tokenId !== undefined
      ? { tokenId: op.context.tokenId, amount: op.context.amount, value: op.context.value }
      : { tokenIds: mintedTokenIds(receipt, op.contractAddress!), value: op.context.value },
});
