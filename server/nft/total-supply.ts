import { z } from "zod";
import type { ChainClient } from "../chain/chain-client";
import { paymentTokenOf } from "../chain/payment-token";
import { paymentTokenView } from "../http/fields";
import type { TransactionSigner } from "../signers/signer";
import { ApiError } from "../http/errors";
import { common, decimal, nftBody } from "./fields";
import { defineRead, type NftDeps } from "./route";
import { editionTokenId, tokenIdFor } from "./standard";

export const totalSupplyRoute = defineRead({
  path: "/nft/total-supply",
  operation: "totalSupply",
  access: { scope: "nft:read", key: "open", bodyCollection: "contractAddress" },
  summary: "Total and maximum supply, and the caller's wallet (WalletOfOwner)",
  description:
    "A read: no transaction is sent. `wallet` lists the tokens the caller's address holds: from the collections index once it has reached the chain's head (its cost does not grow with the collection), before that from the chain in pieces the node accepts. Any ERC-721 works; `maxSupply` is absent for a collection without one. On an ERC-1155 editions contract, `tokenId` names the edition (required there, refused on an ERC-721): the answer is that edition's supply and `maxSupply` (absent for an open edition), and `wallet.balances` the caller's amount of it, read from the chain.",
  body: nftBody({ ...common, tokenId: editionTokenId }).openapi("TotalSupplyRequest"),
  response: z
    .object({
      tokenId: decimal.optional().openapi({ description: "ERC-1155: the edition" }),
      totalSupply: decimal,
      maxSupply: decimal.optional(),
      paymentToken: paymentTokenView.optional(),
      wallet: z.object({
        address: z.string(),
        tokenIds: z.array(decimal).optional().openapi({ description: "ERC-721: the ids the caller holds" }),
        balances: z
          .record(z.string(), decimal)
          .optional()
          .openapi({ description: 'ERC-1155: the caller\'s amount per edition id, {"<id>": "<amount>"}' }),
      }),
    })
    .openapi("TotalSupplyResponse"),
  errors: ["CONTRACT_NOT_FOUND", "TOKEN_NOT_FOUND", "UNSUPPORTED_CONTRACT", "INDEX_BEHIND"],
  async handle(input, deps) {
    // The token prices are in, read beside the supply: absent for the native coin (or a collection without one).
    const [supply, paymentToken] = await Promise.all([
      supplyOf(input, deps),
      paymentTokenOf(deps.chain, input.contractAddress),
    ]);
    return paymentToken ? { ...supply, paymentToken } : supply;
  },
});

async function supplyOf(
  input: { contractAddress: string; tokenId?: bigint },
  { chain, caller, collections }: NftDeps & { caller: TransactionSigner },
) {
  const at = input.contractAddress;
  const { tokenId } = await tokenIdFor(chain, at, input.tokenId);
  if (tokenId !== undefined) {
    // One call for the edition (NonexistentToken: 404), one for the caller's balance of it.
    const [edition, balance] = await chain.read(at, () =>
      Promise.all([
        chain.viewEdition(at, "edition", [tokenId]),
        chain.viewEdition(at, "balanceOf", [caller.address, tokenId]),
      ]),
    );
    const [, maxSupply, , , supply] = edition;
    const id = tokenId.toString();
    return {
      tokenId: id,
      totalSupply: supply.toString(),
      ...(maxSupply !== 0n ? { maxSupply: maxSupply.toString() } : {}),
      wallet: { address: caller.address, balances: { [id]: balance.toString() } },
    };
  }
  if (!collections) {
    // No index (an app built without one): the reference ABI's walletOfOwner, in one call.
    const [totalSupply, maxSupply, tokenIds] = await chain.read(at, () =>
      Promise.all([
        chain.view(at, "totalSupply", []),
        chain.view(at, "maxSupply", []),
        chain.view(at, "walletOfOwner", [caller.address]),
      ]),
    );
    return {
      totalSupply: totalSupply.toString(),
      maxSupply: maxSupply.toString(),
      wallet: { address: caller.address, tokenIds: tokenIds.map(String) },
    };
  }
  await chain.ensureCollection(at);
  const [totalSupply, maxSupply, wallet] = await Promise.all([
    optionalView(chain, at, "totalSupply"),
    optionalView(chain, at, "maxSupply"),
    collections.walletOf(at, caller.address),
  ]);
  const supply = totalSupply ?? wallet.supply ?? (await collections.find(at))?.supply;
  if (supply === undefined)
    throw new ApiError("INDEX_BEHIND", "The index has not counted this collection's tokens yet", undefined, {
      "Retry-After": "1",
    });
  return {
    totalSupply: supply.toString(),
    ...(maxSupply !== undefined ? { maxSupply: maxSupply.toString() } : {}),
    wallet: { address: caller.address, tokenIds: wallet.tokenIds },
  };
}

/** Views a collection was found not to have: not asked again (each miss costs a re-check of its code). */
const missingViews = new Set<string>();

/**
 * A supply view of the collection, or undefined when the collection has no such function (an
 * ERC-721 that is not the reference one): a revert without data, or an empty answer.
 */
async function optionalView(
  chain: ChainClient,
  at: string,
  method: "totalSupply" | "maxSupply",
): Promise<bigint | undefined> {
  // The same address on two chains may be two different contracts.
  const key = `${chain.options.chainId}:${at}:${method}`;
  if (missingViews.has(key)) return undefined;
  try {
    return await chain.read(at, () => chain.view(at, method, []));
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "UNSUPPORTED_CONTRACT") throw err;
    if (missingViews.size >= 10_000) missingViews.clear();
    missingViews.add(key);
    return undefined;
  }
}
