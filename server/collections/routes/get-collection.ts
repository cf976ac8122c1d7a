import { parseInput } from "../../http/validation";
import {
  ChainQuery,
  CollectionPath,
  CollectionView,
  OPEN_SECURITY,
  READ_ACCESS,
  collectionView,
  minBlock,
  notFound,
  readErrors,
  type CollectionRoute,
} from "./common";

const Query = ChainQuery.extend({ minBlock });

/** GET /collections/{address}: name, symbol, supply, holders, and where the index stands against the chain. */
export const getCollectionRoute: CollectionRoute = {
  mount(router, deps) {
    router.get("/collections/:address", deps.access.require(READ_ACCESS), async (ctx) => {
      const { address } = parseInput(CollectionPath, ctx.params);
      const query = parseInput(Query, ctx.query);
      const found = await deps.index.find(address);
      if (!found) throw notFound(address);
      if (query.minBlock !== undefined) await deps.index.atBlock(found, query.minBlock);
      const head = await deps.chain.liveness.now();
      const latest = (await deps.index.find(address)) ?? found;
      // A chain that is down is not asked the name it lacks: the store answers alone, at once.
      const record = head.down ? latest : await deps.index.withMetadata(latest);
      ctx.body = collectionView(record, head);
    });
  },
  document(registry) {
    registry.registerPath({
      method: "get",
      path: "/collections/{address}",
      operationId: "getCollection",
      tags: ["collections"],
      summary: "An indexed collection: name, symbol, supply, holders, and the block the index reflects",
      security: OPEN_SECURITY,
      request: { params: CollectionPath, query: Query },
      responses: {
        200: { description: "The collection", content: { "application/json": { schema: CollectionView } } },
        ...readErrors(),
      },
    });
  },
};
