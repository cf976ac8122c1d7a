import { z } from "zod";
import { collectionCalls } from "../chain/collection-abi";
import { tokenView } from "../chain/erc20";
import { paymentTokenOf } from "../chain/payment-token";
import { writeResponseSchema } from "../engine";
import { paymentTokenView } from "../http/fields";
import { common, decimal, nftBody } from "./fields";
import { tokenWithdrawnAmount, withdrawnAmount } from "./receipt-events";
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
    "The API_KEY (or X-API-Key) header is checked first, in constant time: before the body is read and before any chain call. A collection priced in an ERC-20 also sends its balance of that token: the answer then carries tokenAmount and paymentToken. 409 NOTHING_TO_WITHDRAW only when both balances are 0.",
  body: nftBody(common).openapi("WithdrawRequest"),
  response: writeResponseSchema({
    amount: decimal.openapi({ description: "The ether sent, in wei (0 when only the token balance was)" }),
    to: z.string(),
    tokenAmount: decimal
      .optional()
      .openapi({ description: "The payment-token balance sent, in its smallest unit (when there was one)" }),
    paymentToken: paymentTokenView.optional(),
  }).openapi("WithdrawResponse"),
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
    const at = input.contractAddress;
    const [balance, owner, paymentToken] = await chain.read(at, () =>
      Promise.all([chain.provider.getBalance(at), chain.view(at, "owner", []), paymentTokenOf(chain, at)]),
    );
    // The contract sends its payment-token balance too (NothingToWithdraw only when both are 0).
    const tokenBalance = paymentToken
      ? ((await tokenView(chain, paymentToken.address, "balanceOf", [at])) as bigint)
      : 0n;
    return {
      call: { to: at, data: collectionCalls().encodeFunctionData("withdraw") },
      context: {
        to: owner,
        balance: balance.toString(),
        ...(tokenBalance > 0n ? { tokenBalance: tokenBalance.toString(), paymentToken } : {}),
      },
    };
  },
  result: (receipt, op) => {
    const { to, balance, tokenBalance, paymentToken } = op.context;
    const tokenAmount = tokenWithdrawnAmount(receipt, op.contractAddress!);
    // Withdrawn is emitted only when ether was sent: none means 0 wei (the plan's balance as a fallback for older receipts).
    const amount =
      withdrawnAmount(receipt, op.contractAddress!) ?? (tokenAmount !== undefined ? 0n : BigInt(String(balance)));
    const sentToken = tokenAmount ?? (tokenBalance !== undefined ? BigInt(String(tokenBalance)) : undefined);
    return {
      amount: amount.toString(),
      to,
      ...(sentToken !== undefined && paymentToken ? { tokenAmount: sentToken.toString(), paymentToken } : {}),
    };
  },
});
