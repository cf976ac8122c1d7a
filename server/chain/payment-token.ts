import { ZeroAddress, getAddress } from "ethers";
import { SETTLED_TOPICS, type ChainClient } from "./chain-client";
import { optionalTokenView } from "./erc20";
import { toChainApiError } from "./chain-errors";
import { answerWithin, KeptReads } from "./kept-reads";
import { invalid } from "../http/validation";

/** The ERC-20 a collection's prices are in, as answers show it. */
export interface PaymentToken {
  address: string;
  symbol: string;
  decimals: number;
}

/** A token's symbol and decimals do not change: read once per chain and token. */
const described = new KeptReads<PaymentToken>();

/**
 * The payment token of `collection` (the reference contracts' `paymentToken()`), or undefined when
 * its prices are in the native coin, or when it is a collection without one (any other ERC-721).
 */
export async function paymentTokenOf(chain: ChainClient, collection: string): Promise<PaymentToken | undefined> {
  let token: string;
  try {
    // The same function on both standards: the ERC-721 ABI encodes it for either.
    token = await chain.settled(collection, "paymentToken", SETTLED_TOPICS.paymentToken, () =>
      chain.view(collection, "paymentToken", []),
    );
  } catch (err) {
    // A chain that does not answer is 503, not "native".
    const apiError = toChainApiError(err);
    if (apiError.code === "CHAIN_UNAVAILABLE") throw apiError;
    return undefined;
  }
  if (token === ZeroAddress) return undefined;
  return describeToken(chain, token);
}

/** `token`'s symbol and decimals (a token that lacks them shows "" and 0: it still prices in its smallest unit). */
export function describeToken(chain: ChainClient, token: string): Promise<PaymentToken> {
  const address = getAddress(token);
  return described.get(chain, address, async () => {
    const [symbol, decimals] = await tokenViews(chain, address);
    return {
      address,
      symbol: typeof symbol === "string" ? symbol : "",
      decimals: typeof decimals === "bigint" ? Number(decimals) : 0,
    };
  });
}

/** The token's `symbol()` and `decimals()` as it answers them (undefined for one it lacks). */
function tokenViews(chain: ChainClient, address: string) {
  return Promise.all([optionalTokenView(chain, address, "symbol"), optionalTokenView(chain, address, "decimals")]);
}

/**
 * `token` as answers show it, if it can be a payment token: a contract that answers ERC-20 `symbol()` and
 * `decimals()`. Otherwise 400 VALIDATION_ERROR naming `field`: an address without code in the words of
 * the contracts' own refusal (InvalidPaymentToken, what setPaymentToken answers), and any other contract
 * (a collection, say) for the reads it lacks. Read before anything is signed or sent (POST /nft/deploy).
 */
export async function requirePaymentToken(chain: ChainClient, token: string, field: string): Promise<PaymentToken> {
  const address = getAddress(token);
  const code = await chain.rpc.call<string>("eth_getCode", [address, "latest"]).catch((err: unknown) => {
    throw toChainApiError(err);
  });
  if (code === "0x")
    throw invalid([
      { path: field, message: `${address} is not a contract, so it cannot be a payment token: name an ERC-20` },
    ]);
  const [symbol, decimals] = await tokenViews(chain, address);
  const missing = [
    ...(typeof symbol === "string" ? [] : ["symbol()"]),
    ...(typeof decimals === "bigint" ? [] : ["decimals()"]),
  ];
  if (missing.length > 0)
    throw invalid([
      {
        path: field,
        message: `${address} is a contract but not an ERC-20: it does not answer ${missing.join(" or ")}; name an ERC-20`,
      },
    ]);
  return { address, symbol: symbol as string, decimals: Number(decimals) };
}

/**
 * `paymentTokenOf` for a read the store answers otherwise (GET /collections/{address}): undefined
 * when the chain fails or takes longer than `ms`, so that a slow chain does not hold the answer.
 */
export async function paymentTokenWithin(
  chain: ChainClient,
  collection: string,
  ms: number,
): Promise<PaymentToken | undefined> {
  return answerWithin(paymentTokenOf(chain, collection), ms);
}
