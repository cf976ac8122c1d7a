import type { Context } from "koa";
import { z } from "zod";
import { allows, type AccessPrincipal } from "../../access/principal";
import { ApiError } from "../../http/errors";
import { parseInput } from "../../http/validation";
import { address, decimal } from "../../http/fields";
import { errorResponse } from "../../http/openapi";
import { WalletLabel } from "../../wallets/routes/schemas";
import { editionHoldings, editionTotal } from "../edition-store";
import {
  ChainQuery,
  OPEN_SECURITY,
  READ_ACCESS,
  blockNumber,
  chainId,
  cursorParam,
  decodeCursor,
  encodeCursor,
  indexedStandard,
  limit,
  minBlock,
  readErrors,
  readIndexed,
  type CollectionRoute,
  type CollectionRouteDeps,
} from "./common";
import { chainStatus } from "../../chains/known-head";

const Path = z.object({
  address: address("address"),
  owner: z.union([address("owner"), WalletLabel]).openapi({
    description: "An address, or the label of a wallet the service holds that the access key may use (as `from`)",
    example: "treasury",
  }),
});
const Query = ChainQuery.extend({ limit: limit(1000, 10_000), cursor: cursorParam, minBlock });
const After = z.object({ t: z.string().regex(/^\d{1,78}$/) });

const WalletView = z
  .object({
    chainId,
    owner: z.string(),
    balance: decimal.openapi({ description: "How many tokens it holds (of an ERC-1155: its amounts together)" }),
    tokenIds: z.array(decimal).openapi({ description: "Ascending; paged with `cursor`" }),
    holdings: z
      .array(z.object({ tokenId: decimal, amount: decimal }))
      .optional()
      .openapi({ description: "ERC-1155: each edition it holds and the amount, by id as `tokenIds`" }),
    cursor: z.string().optional(),
    blockNumber,
    chainStatus,
  })
  .openapi("CollectionWallet");

/**
 * The address of the wallet labelled `label`, as `from` finds it: held by the service and within the
 * access key's wallets. One the key may not use answers exactly as one that does not exist.
 */
async function labelledWallet(ctx: Context, deps: CollectionRouteDeps, label: string): Promise<string> {
  const principal = ctx.state.access as AccessPrincipal | undefined;
  const found = principal && deps.walletByLabel ? await deps.walletByLabel(label) : null;
  if (found && allows(principal!, { wallet: found })) return found;
  throw new ApiError(
    "WALLET_NOT_FOUND",
    `owner is neither an address nor the label of a wallet this access key may use${principal ? "" : " (a label needs an access key)"}`,
    [{ path: "owner", message: "no such wallet for this access key" }],
  );
}

/** GET /collections/{address}/wallets/{owner}: the ids of the tokens `owner` holds (of an ERC-1155, with amounts). */
export const getWalletRoute: CollectionRoute = {
  mount(router, deps) {
    router.get("/collections/:address/wallets/:owner", deps.access.require(READ_ACCESS), async (ctx) => {
      const { address: at, owner: given } = parseInput(Path, ctx.params);
      const owner = given.startsWith("0x") ? given : await labelledWallet(ctx, deps, given);
      const query = parseInput(Query, ctx.query);
      const after = decodeCursor(query.cursor, After);
      const { standard } = await indexedStandard(deps, at);
      if (standard === "erc1155") {
        ctx.body = await readIndexed(deps, at, query.minBlock, async (db, record) => {
          const holder = owner.toLowerCase();
          const [holdings, total] = await Promise.all([
            editionHoldings(db, record.id, holder, query.limit, after?.t),
            editionTotal(db, record.id, holder),
          ]);
          return {
            owner,
            balance: total.amount.toString(),
            tokenIds: holdings.map((h) => h.tokenId),
            holdings: holdings.map((h) => ({ tokenId: h.tokenId, amount: h.amount.toString() })),
            ...(holdings.length === query.limit
              ? { cursor: encodeCursor({ t: holdings[holdings.length - 1].tokenId }) }
              : {}),
            blockNumber: record.indexedBlock,
          };
        });
        return;
      }
      ctx.body = await readIndexed(deps, at, query.minBlock, async (db, record) => {
        const holder = owner.toLowerCase();
        const [tokenIds, balance] = await Promise.all([
          deps.index.store.wallet(db, record.id, holder, query.limit, after?.t),
          deps.index.store.balance(db, record.id, holder),
        ]);
        return {
          owner,
          balance: balance.toString(),
          tokenIds,
          ...(tokenIds.length === query.limit ? { cursor: encodeCursor({ t: tokenIds[tokenIds.length - 1] }) } : {}),
          blockNumber: record.indexedBlock,
        };
      });
    });
  },
  document(registry) {
    registry.registerPath({
      method: "get",
      path: "/collections/{address}/wallets/{owner}",
      operationId: "getCollectionWallet",
      tags: ["collections"],
      summary: "The ids of the tokens an address holds in an indexed collection (of an ERC-1155, with amounts)",
      security: OPEN_SECURITY,
      request: { params: Path, query: Query },
      responses: {
        200: { description: "The wallet", content: { "application/json": { schema: WalletView } } },
        ...readErrors({ 404: errorResponse("COLLECTION_NOT_FOUND, WALLET_NOT_FOUND (an unknown label)") }),
      },
    });
  },
};
