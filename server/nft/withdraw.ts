import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { writeResponseSchema } from "../engine";
import { common, decimal, nftBody } from "./fields";
import { withdrawnAmount } from "./receipt-events";
import { defineWrite } from "./route";

export const withdrawRoute = defineWrite({
  path: "/nft/withdraw",
  operation: "withdraw",
  access: {
    scope: "nft:withdraw",
    key: "always",
    unauthorizedCode: "INVALID_API_KEY",
    bodyCollection: "contractAddress",
  },
  summary: "Send the contract's whole balance to its owner (owner only; needs API_KEY)",
  description:
    "The API_KEY (or X-API-Key) header is checked first, in constant time: before the body is read and before any chain call.",
  body: nftBody(common).openapi("WithdrawRequest"),
  response: writeResponseSchema({ amount: decimal, to: z.string() }).openapi("WithdrawResponse"),
  errors: [
    "INVALID_API_KEY",
    "INSUFFICIENT_FUNDS",
    "NOT_CONTRACT_OWNER",
    "CONTRACT_NOT_FOUND",
    "NOTHING_TO_WITHDRAW",
    "UNSUPPORTED_CONTRACT",
    "CONTRACT_REVERTED",
  ],
  async plan(input, { chain }) {
    const [balance, owner] = await chain.read(input.contractAddress, () =>
      Promise.all([chain.provider.getBalance(input.contractAddress), chain.view(input.contractAddress, "owner", [])]),
    );
    return {
      call: { to: input.contractAddress, data: collectionCalls().encodeFunctionData("withdraw") },
      context: { to: owner, balance: balance.toString() },
    };
  },
  result: (receipt, op) => ({
    amount: (withdrawnAmount(receipt, op.contractAddress!) ?? BigInt(String(op.context.balance))).toString(),
    to: op.context.to,
  }),
});
