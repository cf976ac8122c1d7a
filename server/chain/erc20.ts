import { Interface } from "ethers";
import type { ChainClient } from "./chain-client";
import { toChainApiError } from "./chain-errors";
import { codecsOf } from "./typed-abi";

/**
 * Reads of an ERC-20 payment token and its EIP-2612 permit: the token is any contract a collection
 * names, not ours, so each read may be missing (a token without `permit`, a `symbol` as bytes32).
 */
const ERC20 = new Interface([
  "function balanceOf(address owner) view returns (uint256)",
  "function allowance(address owner, address spender) view returns (uint256)",
  "function symbol() view returns (string)",
  "function decimals() view returns (uint8)",
  "function name() view returns (string)",
  "function nonces(address owner) view returns (uint256)",
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)",
]);
const CODECS = codecsOf(() => ERC20);

export type Erc20View =
  "balanceOf" | "allowance" | "symbol" | "decimals" | "name" | "nonces" | "DOMAIN_SEPARATOR" | "eip712Domain";

/** One view call of `token`; a revert or an answer that does not decode is thrown as an ApiError. */
export async function tokenView(
  chain: ChainClient,
  token: string,
  method: Erc20View,
  args: readonly unknown[] = [],
): Promise<unknown> {
  const codec = CODECS(method);
  try {
    const answer = await chain.rpc.call<string>("eth_call", [{ to: token, data: codec.encode(args) }, "latest"]);
    return codec.decode(answer);
  } catch (err) {
    throw toChainApiError(err);
  }
}

/** `tokenView`, or undefined when the token has no such function; a chain that does not answer still throws. */
export async function optionalTokenView(
  chain: ChainClient,
  token: string,
  method: Erc20View,
  args: readonly unknown[] = [],
): Promise<unknown> {
  try {
    return await tokenView(chain, token, method, args);
  } catch (err) {
    // tokenView threw an ApiError: only a chain that does not answer is more than a missing function.
    if ((err as { code?: string }).code === "CHAIN_UNAVAILABLE") throw err;
    return undefined;
  }
}

/** The token's balance of `owner` and what `owner` allows `spender`, in the token's smallest unit. */
export async function balanceAndAllowance(
  chain: ChainClient,
  token: string,
  owner: string,
  spender: string,
): Promise<{ balance: bigint; allowance: bigint }> {
  const [balance, allowance] = await Promise.all([
    tokenView(chain, token, "balanceOf", [owner]),
    tokenView(chain, token, "allowance", [owner, spender]),
  ]);
  return { balance: balance as bigint, allowance: allowance as bigint };
}
