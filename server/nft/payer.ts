import type { ChainClient } from "../chain/chain-client";
import { balanceAndAllowance, tokenView } from "../chain/erc20";
import type { PaymentToken } from "../chain/payment-token";
import { ApiError } from "../http/errors";
import { inTokenWords } from "./price";

/**
 * What a token-priced mint needs of its payer, checked before anything is sent: the balance (402
 * INSUFFICIENT_TOKEN_BALANCE) first, then the allowance to the collection (409 TOKEN_ALLOWANCE_TOO_LOW).
 */
export async function checkPayer(
  chain: ChainClient,
  token: PaymentToken,
  payer: string,
  collection: string,
  price: bigint,
): Promise<void> {
  const { balance, allowance } = await balanceAndAllowance(chain, token.address, payer, collection);
  if (balance < price) throw shortBalance(token, payer, balance, price);
  if (allowance < price)
    throw new ApiError(
      "TOKEN_ALLOWANCE_TOO_LOW",
      `${payer} allows the collection ${allowance} of ${token.symbol || token.address} and the mint costs ` +
        `${inTokenWords(price, token)}: call approve(${collection}, ${price}) on the token ${token.address} ` +
        "from the payer, then retry (or pay with a permit: POST /nft/checkout)",
      [
        { path: "spender", message: collection },
        { path: "amount", message: price.toString() },
      ],
    );
}

/** 402 INSUFFICIENT_TOKEN_BALANCE unless `payer` holds `price` of the token. */
export async function checkBalance(chain: ChainClient, token: PaymentToken, payer: string, price: bigint) {
  const balance = (await tokenView(chain, token.address, "balanceOf", [payer])) as bigint;
  if (balance < price) throw shortBalance(token, payer, balance, price);
}

function shortBalance(token: PaymentToken, payer: string, balance: bigint, price: bigint): ApiError {
  return new ApiError(
    "INSUFFICIENT_TOKEN_BALANCE",
    `${payer} holds ${balance} of ${token.symbol || token.address} and the mint costs ${inTokenWords(price, token)}: ` +
      `send it at least ${price - balance} more of the token ${token.address}, then retry`,
  );
}
