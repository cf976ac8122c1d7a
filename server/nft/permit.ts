import { verifyTypedData, type TypedDataDomain } from "ethers";
import type { ChainClient } from "../chain/chain-client";
import { optionalTokenView } from "../chain/erc20";
import type { PaymentToken } from "../chain/payment-token";
import { ApiError } from "../http/errors";

/**
 * The EIP-2612 permit a buyer signs for a checkout: its EIP-712 domain as the token states it, the
 * typed data `eth_signTypedData_v4` takes, and the check that a signature is the buyer's.
 */

export const PERMIT_TYPE = [
  { name: "owner", type: "address" },
  { name: "spender", type: "address" },
  { name: "value", type: "uint256" },
  { name: "nonce", type: "uint256" },
  { name: "deadline", type: "uint256" },
];

/** EIP-712's domain fields, in the order the standard hashes them. */
const DOMAIN_FIELDS = [
  { name: "name", type: "string" },
  { name: "version", type: "string" },
  { name: "chainId", type: "uint256" },
  { name: "verifyingContract", type: "address" },
  { name: "salt", type: "bytes32" },
] as const;

export interface PermitTerms {
  buyer: string;
  /** The collection: it spends the permit. */
  spender: string;
  value: bigint;
  nonce: bigint;
  deadline: bigint;
}

/** A token that can take a permit: its domain and the buyer's current nonce. */
export interface PermitToken {
  address: string;
  domain: TypedDataDomain;
  nonce: bigint;
}

/**
 * The token's domain and `buyer`'s nonce; 422 PERMIT_UNSUPPORTED for a token without EIP-2612
 * (no `nonces` or no `DOMAIN_SEPARATOR`). The domain is the token's EIP-5267 `eip712Domain()`, else
 * its `name()`, version "1", this chain and the token (what OpenZeppelin's ERC20Permit signs).
 */
export async function readPermitToken(chain: ChainClient, token: PaymentToken, buyer: string): Promise<PermitToken> {
  const at = token.address;
  const [nonce, separator, stated, name] = await Promise.all([
    optionalTokenView(chain, at, "nonces", [buyer]),
    optionalTokenView(chain, at, "DOMAIN_SEPARATOR"),
    optionalTokenView(chain, at, "eip712Domain"),
    optionalTokenView(chain, at, "name"),
  ]);
  if (typeof nonce !== "bigint" || typeof separator !== "string")
    throw new ApiError(
      "PERMIT_UNSUPPORTED",
      `The payment token ${token.symbol || at} (${at}) has no EIP-2612 permit (nonces, DOMAIN_SEPARATOR): ` +
        "the buyer approves the collection and mints with POST /nft/mint instead",
    );
  const domain = stated
    ? domainOf(stated as readonly unknown[])
    : {
        name: typeof name === "string" ? name : "",
        version: "1",
        chainId: chain.options.chainId,
        verifyingContract: at,
      };
  return { address: at, domain, nonce };
}

/** The domain an EIP-5267 answer states: only the fields its bitmap names. */
function domainOf(stated: readonly unknown[]): TypedDataDomain {
  const [fields, name, version, chainId, verifyingContract, salt] = stated;
  const bits = Number(BigInt(fields as string));
  const values = [name, version, chainId, verifyingContract, salt];
  const domain: Record<string, unknown> = {};
  DOMAIN_FIELDS.forEach((field, i) => {
    if (bits & (1 << i)) domain[field.name] = values[i];
  });
  return domain as TypedDataDomain;
}

/** What `eth_signTypedData_v4` takes: numbers as decimal strings, EIP712Domain among the types. */
export function permitTypedData(domain: TypedDataDomain, terms: PermitTerms) {
  const present = DOMAIN_FIELDS.filter((field) => domain[field.name] !== undefined && domain[field.name] !== null);
  return {
    domain: Object.fromEntries(
      present.map((field) => {
        const value = domain[field.name];
        return [field.name, typeof value === "bigint" ? value.toString() : value];
      }),
    ),
    types: { EIP712Domain: present.map((field) => ({ ...field })), Permit: PERMIT_TYPE },
    primaryType: "Permit" as const,
    message: {
      owner: terms.buyer,
      spender: terms.spender,
      value: terms.value.toString(),
      nonce: terms.nonce.toString(),
      deadline: terms.deadline.toString(),
    },
  };
}

/** The address a permit signature recovers to over `terms`, or null for a signature that is not one. */
export function permitSigner(domain: TypedDataDomain, terms: PermitTerms, signature: string): string | null {
  try {
    const message = {
      owner: terms.buyer,
      spender: terms.spender,
      value: terms.value,
      nonce: terms.nonce,
      deadline: terms.deadline,
    };
    return verifyTypedData(domain, { Permit: PERMIT_TYPE }, message, signature);
  } catch {
    return null;
  }
}
