import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { writeResponseSchema } from "../engine";
import { address, common, decimal, nftBody, uint } from "./fields";
import { mintedTokenIds } from "./receipt-events";
import { defineWrite } from "./route";

export const mintForFreeRoute = defineWrite({
  path: "/nft/mintForFree",
  operation: "mintForFree",
  access: { scope: "nft:mintForFree", key: "open", bodyCollection: "contractAddress" },
  summary: "Mint tokens at no cost (owner only; works while paused)",
  body: nftBody({ ...common, mintAmount: uint("mintAmount"), receiver: address("receiver").optional() }).openapi(
    "MintForFreeRequest",
  ),
  response: writeResponseSchema({ tokenIds: z.array(decimal), receiver: z.string() }).openapi("MintForFreeResponse"),
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "MAX_SUPPLY_EXCEEDED",
    "INVALID_MINT_AMOUNT",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { signer }) {
    const receiver = input.receiver ?? signer.address;
    return {
      call: {
        to: input.contractAddress,
        data: collectionCalls().encodeFunctionData("mintForFree", [input.mintAmount, receiver]),
      },
      context: { receiver },
    };
  },
  result: (receipt, op) => ({
    tokenIds: mintedTokenIds(receipt, op.contractAddress!),
    receiver: op.context.receiver,
  }),
});
