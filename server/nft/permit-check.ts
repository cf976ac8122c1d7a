import type { ChainClient } from "../chain/chain-client";
import { tokenView } from "../chain/erc20";
import { ApiError } from "../http/errors";
import { permitSigner, type PermitTerms, type PermitToken } from "./permit";

/**
 * 400 INVALID_SIGNATURE unless `signature` is the buyer's permit of the price to the collection: at
 * the buyer's current nonce (the contract applies it), or at the nonce before with the allowance it
 * set still covering the price (someone else applied it first; the contract mints on that allowance).
 */
export async function checkPermit(
  chain: ChainClient,
  token: PermitToken,
  permit: PermitTerms & { signature: string },
): Promise<void> {
  const { buyer, signature, nonce } = permit;
  const signer = permitSigner(token.domain, permit, signature);
  if (sameAddress(signer, buyer)) return;
  const applied =
    nonce > 0n && sameAddress(permitSigner(token.domain, { ...permit, nonce: nonce - 1n }, signature), buyer);
  if (applied) {
    const allowance = (await tokenView(chain, token.address, "allowance", [buyer, permit.spender])) as bigint;
    if (allowance >= permit.value) return;
    throw new ApiError(
      "INVALID_SIGNATURE",
      `This permit (nonce ${nonce - 1n}) was already applied and the allowance it set has been spent; ` +
        `${buyer}'s nonce is now ${nonce}: the buyer signs a new permit (POST /nft/checkout)`,
      [{ path: "signature", message: `used: nonce ${nonce - 1n}, current nonce ${nonce}` }],
    );
  }
  throw new ApiError(
    "INVALID_SIGNATURE",
    `The signature does not recover to the buyer ${buyer} over the permit of ${permit.value} to ${permit.spender} ` +
      `at nonce ${nonce}, deadline ${permit.deadline}` +
      (signer ? ` (it recovers to ${signer})` : "") +
      ": the buyer signs the typed data POST /nft/checkout answers, with the same mintAmount and deadline",
    [{ path: "signature", message: `not ${buyer}'s permit at nonce ${nonce}` }],
  );
}

const sameAddress = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase();
