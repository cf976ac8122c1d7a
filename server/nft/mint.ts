import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { writeResponseSchema } from "../engine";
import { ApiError } from "../http/errors";
import { common, decimal, uint, nftBody } from "./fields";
import { mintedTokenIds } from "./receipt-events";
import { defineWrite } from "./route";

export const mintRoute = defineWrite({
  path: "/nft/mint",
  operation: "mint",
  access: { scope: "nft:mint", key: "open", bodyCollection: "contractAddress" },
  summary: "Mint tokens to the caller, paying cost × mintAmount",
  description: "The price is read from the contract and sent as the transaction's value.",
  body: nftBody({ ...common, mintAmount: uint("mintAmount") }).openapi("MintRequest"),
  response: writeResponseSchema({ tokenIds: z.array(decimal), value: decimal }).openapi("MintResponse"),
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_WHITELISTED",
    "CONTRACT_NOT_FOUND",
    "CONTRACT_PAUSED",
    "MAX_SUPPLY_EXCEEDED",
    "INVALID_MINT_AMOUNT",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { chain }) {
    const cost = await chain.read(input.contractAddress, () => chain.view(input.contractAddress, "cost", []));
    const value = cost * input.mintAmount;
    // Past 256 bits no transaction can carry the price; far above any per-transaction cap.
    if (value >= 2n ** 256n)
      throw new ApiError("INVALID_MINT_AMOUNT", `mintAmount ${input.mintAmount} is far above maxMintAmountPerTx`);
    return {
      call: {
        to: input.contractAddress,
        data: collectionCalls().encodeFunctionData("mint", [input.mintAmount]),
        value,
      },
      context: { value: value.toString() },
    };
  },
  result: (receipt, op) => ({
    tokenIds: mintedTokenIds(receipt, op.contractAddress!),
    value: op.context.value,
  }),
});
