import { z } from "zod";
import { parseInput } from "../../http/validation";
import { address, decimal } from "../../nft/fields";
import {
  OPEN_SECURITY,
  READ_ACCESS,
  blockNumber,
  cursorParam,
  decodeCursor,
  encodeCursor,
  limit,
  minBlock,
  readErrors,
  readIndexed,
  type CollectionRoute,
} from "./common";

const Path = z.object({ address: address("address"), owner: address("owner") });
const Query = z.object({ limit: limit(1000, 10_000), cursor: cursorParam, minBlock });
const After = z.object({ t: z.string().regex(/^\d{1,78}$/) });

const WalletView = z
  .object({
    owner: z.string(),
    balance: decimal.openapi({ description: "How many tokens it holds" }),
    tokenIds: z.array(decimal).openapi({ description: "Ascending; paged with `cursor`" }),
    cursor: z.string().optional(),
    blockNumber,
  })
  .openapi("CollectionWallet");

/** GET /collections/{address}/wallets/{owner}: the ids of the tokens `owner` holds. */
export const getWalletRoute: CollectionRoute = {
  mount(router, deps) {
    router.get("/collections/:address/wallets/:owner", deps.access.require(READ_ACCESS), async (ctx) => {
      const { address: at, owner } = parseInput(Path, ctx.params);
      const query = parseInput(Query, ctx.query);
      const after = decodeCursor(query.cursor, After);
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
      summary: "The ids of the tokens an address holds in an indexed collection",
      security: OPEN_SECURITY,
      request: { params: Path, query: Query },
      responses: {
        200: { description: "The wallet", content: { "application/json": { schema: WalletView } } },
        ...readErrors(),
      },
    });
  },
};
