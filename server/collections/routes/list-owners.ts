import { z } from "zod";
import { parseInput } from "../../http/validation";
import { decimal } from "../../http/fields";
import {
  ChainQuery,
  CollectionPath,
  OPEN_SECURITY,
  READ_ACCESS,
  blockNumber,
  chainId,
  checksummed,
  cursorParam,
  decodeCursor,
  encodeCursor,
  limit,
  minBlock,
  readErrors,
  readIndexed,
  type CollectionRoute,
} from "./common";
import { chainStatus } from "../../chains/known-head";

const Query = ChainQuery.extend({ limit: limit(100, 1000), cursor: cursorParam, minBlock });
/** Where a page ended: the last holder's count and address. */
const After = z.object({ t: z.string().regex(/^\d{1,78}$/), o: z.string().regex(/^0x[0-9a-f]{40}$/) });

const OwnersPage = z
  .object({
    chainId,
    owners: z.array(z.object({ address: z.string(), tokens: decimal })),
    cursor: z
      .string()
      .optional()
      .openapi({ description: "Present when there may be more: pass it to get the next page" }),
    blockNumber,
    chainStatus,
  })
  .openapi("CollectionOwners");

/** GET /collections/{address}/owners: holders and how many tokens each holds, most first, paged. */
export const listOwnersRoute: CollectionRoute = {
  mount(router, deps) {
    router.get("/collections/:address/owners", deps.access.require(READ_ACCESS), async (ctx) => {
      const { address } = parseInput(CollectionPath, ctx.params);
      const query = parseInput(Query, ctx.query);
      const after = decodeCursor(query.cursor, After);
      ctx.body = await readIndexed(deps, address, query.minBlock, async (db, record) => {
        const owners = await deps.index.store.owners(
          db,
          record.id,
          query.limit,
          after ? { tokens: BigInt(after.t), owner: after.o } : undefined,
        );
        const last = owners[owners.length - 1];
        return {
          owners: owners.map((o) => ({ address: checksummed(o.owner), tokens: o.tokens.toString() })),
          ...(owners.length === query.limit
            ? { cursor: encodeCursor({ t: last.tokens.toString(), o: last.owner }) }
            : {}),
          blockNumber: record.indexedBlock,
        };
      });
    });
  },
  document(registry) {
    registry.registerPath({
      method: "get",
      path: "/collections/{address}/owners",
      operationId: "listCollectionOwners",
      tags: ["collections"],
      summary: "Holders of an indexed collection and how many tokens each holds, most first, paged",
      security: OPEN_SECURITY,
      request: { params: CollectionPath, query: Query },
      responses: {
        200: { description: "A page of holders", content: { "application/json": { schema: OwnersPage } } },
        ...readErrors(),
      },
    });
  },
};
