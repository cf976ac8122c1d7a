import type { ChainClient } from "../chain/chain-client";
import type { PaymentToken } from "../chain/payment-token";
import { toChainApiError } from "../chain/chain-errors";
import { invalid } from "../http/validation";
import { priceOf } from "./price";
import { tokenIdFor } from "./standard";

/** A permit sale: the edition (ERC-1155) or none, and its price in the collection's payment token. */
export interface TokenSale {
  tokenId: bigint | undefined;
  value: bigint;
  paymentToken: PaymentToken;
}

/**
 * What `mintAmount` costs a buyer who pays with a permit: 400 VALIDATION_ERROR naming paymentToken
 * on a collection priced in the native coin (a permit moves an ERC-20 only; there is nothing to sign).
 */
export async function tokenSale(
  chain: ChainClient,
  input: { contractAddress: string; tokenId?: bigint; mintAmount: bigint },
): Promise<TokenSale> {
  const at = input.contractAddress;
  const { tokenId } = await tokenIdFor(chain, at, input.tokenId);
  const { value, paymentToken } = await priceOf(chain, at, tokenId, input.mintAmount);
  if (!paymentToken)
    throw invalid([
      {
        path: "paymentToken",
        message:
          `${at} is priced in the native coin, so a buyer has no permit to sign: ` +
          "mint with POST /nft/mint, or have its owner set an ERC-20 (POST /nft/setPaymentToken)",
      },
    ]);
  return { tokenId, value, paymentToken };
}

/**
 * Unix seconds now, as a permit's deadline is checked: the later of this clock and the chain's head
 * (a chain whose blocks run ahead, a dev chain moved forward, expires a permit on its own time).
 */
export async function chainNow(chain: ChainClient): Promise<bigint> {
  const wall = BigInt(Math.floor(Date.now() / 1000));
  const head = await chain.rpc
    .call<{ timestamp: string } | null>("eth_getBlockByNumber", ["latest", false])
    .catch((err: unknown) => {
      throw toChainApiError(err);
    });
  const mined = head ? BigInt(head.timestamp) : 0n;
  return mined > wall ? mined : wall;
}
