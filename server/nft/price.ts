import { SETTLED_TOPICS, type ChainClient } from "../chain/chain-client";
import { paymentTokenOf, type PaymentToken } from "../chain/payment-token";
import { ApiError } from "../http/errors";

/** What a mint of `mintAmount` costs: `value` in wei, or in the payment token's smallest unit when it has one. */
export interface Price {
  value: bigint;
  paymentToken?: PaymentToken;
}

/**
 * The price of minting `mintAmount` of a collection (or of edition `tokenId`), read with the
 * payment token in one round trip. 422 INVALID_MINT_AMOUNT past 256 bits: no call can carry it.
 */
export async function priceOf(
  chain: ChainClient,
  at: string,
  tokenId: bigint | undefined,
  mintAmount: bigint,
): Promise<Price> {
  const [cost, paymentToken] = await chain.read(at, () =>
    Promise.all([
      // Kept per block until a header may hold its CostChanged (SettledViews): one call fewer a mint.
      tokenId === undefined
        ? chain.settled(at, "cost", SETTLED_TOPICS.cost, () => chain.view(at, "cost", []))
        : chain.settled(at, `cost:${tokenId}`, SETTLED_TOPICS.editionCost, () =>
            chain.viewEdition(at, "cost", [tokenId]),
          ),
      paymentTokenOf(chain, at),
    ]),
  );
  const value = cost * mintAmount;
  // Far above any per-transaction cap.
  if (value >= 2n ** 256n) {
    const max = await (
      tokenId === undefined
        ? chain.view(at, "maxMintAmountPerTx", [])
        : chain.viewEdition(at, "edition", [tokenId]).then((edition) => edition[2])
    ).catch(() => undefined);
    throw new ApiError(
      "INVALID_MINT_AMOUNT",
      max === undefined
        ? `mintAmount ${mintAmount} is far above maxMintAmountPerTx: mint fewer per request`
        : `At most ${max} per transaction; ${mintAmount} were asked: mint ${max} or fewer per request`,
    );
  }
  return { value, ...(paymentToken ? { paymentToken } : {}) };
}

/** A token amount in words: "2500000 TUSD (smallest unit, 6 decimals)". */
export const inTokenWords = (amount: bigint, token: PaymentToken) =>
  `${amount} ${token.symbol || token.address} (smallest unit, ${token.decimals} decimals)`;
