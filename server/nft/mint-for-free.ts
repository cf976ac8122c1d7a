import { z } from "zod";
import { collectionInterface } from "../chain/collection";
import { address, common, decimal, uint } from "./fields";
import { mintedTokenIds } from "./receipt-events";
import { defineRoute, writeResponseSchema, writeResult } from "./route";

export const mintForFreeRoute = defineRoute({
  path: "/nft/mintForFree",
  summary: "Mint tokens at no cost (owner only; works while paused)",
  body: z
    .object({ ...common, mintAmount: uint("mintAmount"), receiver: address("receiver").optional() })
    .openapi("MintForFreeRequest"),
  response: writeResponseSchema({ tokenIds: z.array(decimal), receiver: z.string() }).openapi("MintForFreeResponse"),
  writes: true,
  errors: [
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "MAX_SUPPLY_EXCEEDED",
    "INVALID_MINT_AMOUNT",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async handle(input, { chain }) {
    const signer = chain.signers.get(input.privateKey);
    const receiver = input.receiver ?? signer.address;
    const outcome = await chain.write({
      signer,
      to: input.contractAddress,
      data: collectionInterface().encodeFunctionData("mintForFree", [input.mintAmount, receiver]),
    });
    return writeResult(outcome, signer, input.contractAddress, (receipt) => ({
      tokenIds: mintedTokenIds(receipt, input.contractAddress),
      receiver,
    }));
  },
});
