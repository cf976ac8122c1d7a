import { z } from "zod";
import { paymentTokenWithin } from "../../chain/payment-token";
import { parseInput } from "../../http/validation";
import { editions as readEditions } from "../edition-store";
import {
  ChainQuery,
  CollectionPath,
  CollectionView,
  OPEN_SECURITY,
  READ_ACCESS,
  collectionView,
  cursorParam,
  decodeCursor,
  encodeCursor,
  indexedStandard,
  maxSupplyWithin,
  minBlock,
  readErrors,
  type CollectionRoute,
} from "./common";

const Query = ChainQuery.extend({ minBlock, editionsCursor: cursorParam });
/** Editions listed in one answer: the rest page with `editionsCursor`. */
const EDITIONS_PAGE = 1_000;
const EditionsAfter = z.object({ k: z.string().regex(/^\d{1,78}$/) });

/**
 * GET /collections/{address}: name, symbol, standard, supply (an ERC-721's max supply), holders, an ERC-1155's editions, and
 * where the index stands against the chain.
 */
export const getCollectionRoute: CollectionRoute = {
  mount(router, deps) {
    router.get("/collections/:address", deps.access.require(READ_ACCESS), async (ctx) => {
      const { address } = parseInput(CollectionPath, ctx.params);
      const query = parseInput(Query, ctx.query);
      const after = decodeCursor(query.editionsCursor, EditionsAfter);
      const { record: found, standard } = await indexedStandard(deps, address);
      if (query.minBlock !== undefined) await deps.index.atBlock(found, query.minBlock);
      const head = await deps.chain.liveness.now();
      // From the chain, together within 1 s: a slow chain leaves them out, as a down one does. The payment
      // token (its owner may change it at any block) and an ERC-721's max supply (fixed: read once);
      // an edition's max supply is on its token.
      const [paymentToken, maxSupply] = head.down
        ? [undefined, undefined]
        : await Promise.all([
            paymentTokenWithin(deps.chain, address, 1_000),
            standard === "erc1155" ? undefined : maxSupplyWithin(deps.chain, address, 1_000),
          ]);
      if (standard === "erc1155") {
        // The collection's counters and its editions from one snapshot: they agree with each other.
        const read = await deps.index.store.snapshot(async (db) => {
          const latest = (await deps.index.store.find(found.chainId, found.address, db)) ?? found;
          return { latest, page: await readEditions(db, found.id, EDITIONS_PAGE, after?.k) };
        });
        const record = head.down ? read.latest : await deps.index.withMetadata(read.latest);
        const last = read.page[read.page.length - 1];
        const cursor = read.page.length === EDITIONS_PAGE ? encodeCursor({ k: last.tokenId }) : undefined;
        ctx.body = collectionView(record, head, standard, { page: read.page, cursor }, paymentToken);
        return;
      }
      const latest = (await deps.index.find(address)) ?? found;
      // A chain that is down is not asked the name it lacks: the store answers alone, at once.
      const record = head.down ? latest : await deps.index.withMetadata(latest);
      ctx.body = collectionView(record, head, standard, undefined, paymentToken, maxSupply);
    });
  },
  document(registry) {
    registry.registerPath({
      method: "get",
      path: "/collections/{address}",
      operationId: "getCollection",
      tags: ["collections"],
      summary:
        "An indexed collection: name, symbol, standard, supply and max supply, payment token, holders, an ERC-1155's editions, and the block the index reflects",
      security: OPEN_SECURITY,
      request: { params: CollectionPath, query: Query },
      responses: {
        200: { description: "The collection", content: { "application/json": { schema: CollectionView } } },
        ...readErrors(),
      },
    });
  },
};
