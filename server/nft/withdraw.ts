import { z } from "zod";
import { collectionInterface } from "../chain/collection";
import { assertApiKey } from "./api-key";
import { common, decimal } from "./fields";
import { withdrawnAmount } from "./receipt-events";
import { defineRoute, writeResponseSchema, writeResult } from "./route";

export const withdrawRoute = defineRoute({
  path: "/nft/withdraw",
  summary: "Send the contract's whole balance to its owner (owner only; needs API_KEY)",
  description: "The API_KEY (or X-API-Key) header is checked first, in constant time, before any chain call.",
  body: z.object(common).openapi("WithdrawRequest"),
  response: writeResponseSchema({ amount: decimal, to: z.string() }).openapi("WithdrawResponse"),
  apiKey: true,
  writes: true,
  errors: [
    "INVALID_API_KEY",
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "NOTHING_TO_WITHDRAW",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async handle(input, { chain, apiKey }, ctx) {
    assertApiKey(ctx, apiKey);
    const signer = chain.signers.get(input.privateKey);
    const [balance, owner] = await chain.read(input.contractAddress, () =>
      Promise.all([
        chain.provider.getBalance(input.contractAddress),
        chain.view<string>(input.contractAddress, "owner"),
      ]),
    );
    const outcome = await chain.write({
      signer,
      to: input.contractAddress,
      data: collectionInterface().encodeFunctionData("withdraw"),
    });
    return writeResult(outcome, signer, input.contractAddress, (receipt) => ({
      amount: (withdrawnAmount(receipt, input.contractAddress) ?? balance).toString(),
      to: owner,
    }));
  },
});
