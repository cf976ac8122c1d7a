import { z } from "zod";
import { ApiError } from "../../http/errors";
import { parseInput } from "../../http/validation";
import { address, decimal, uint } from "../../http/fields";
import { ZERO_ADDRESS } from "../store";
import {
  ChainQuery,
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
import { errorResponse } from "../../http/openapi";

const Path = z.object({ address: address("address"), tokenId: uint("tokenId") });
const Query = ChainQuery.extend({ limit: limit(100, 1000), cursor: cursorParam, minBlock });
const After = z.object({ b: z.number().int().min(0), i: z.number().int().min(0) });

const Transfer = z.object({
  blockNumber: z.number().int(),
  transactionHash: z.string(),
  logIndex: z.number().int(),
  from: z.string(),
  to: z.string(),
});

const TokenView = z
  .object({
    chainId,
    tokenId: decimal,
    owner: z.string().nullable().openapi({ description: "null once burned" }),
    burned: z.boolean(),
    mintedBlock: z.number().int().nullable(),
    transfers: z.array(Transfer).openapi({ description: "Oldest first; paged with `cursor`" }),
    cursor: z.string().optional(),
    blockNumber,
    chainStatus,
  })
  .openapi("CollectionToken");

/** GET /collections/{address}/tokens/{tokenId}: its owner, the block it was minted in, and its transfers. */
export const getTokenRoute: CollectionRoute = {
  mount(router, deps) {
    router.get("/collections/:address/tokens/:tokenId", deps.access.require(READ_ACCESS), async (ctx) => {
      const { address: at, tokenId } = parseInput(Path, ctx.params);
      const query = parseInput(Query, ctx.query);
      const after = decodeCursor(query.cursor, After);
      const id = tokenId.toString();
      ctx.body = await readIndexed(deps, at, query.minBlock, async (db, record) => {
        const token = await deps.index.store.token(db, record.id, id);
        if (!token)
          throw new ApiError(
            "TOKEN_NOT_FOUND",
            `Token ${id} of ${at} has no transfer up to block ${record.indexedBlock}`,
          );
        const transfers = await deps.index.store.tokenTransfers(
          db,
          record.id,
          id,
          query.limit,
          after ? { blockNumber: after.b, logIndex: after.i } : undefined,
        );
        const last = transfers[transfers.length - 1];
        const burned = token.owner === ZERO_ADDRESS;
        return {
          tokenId: id,
          owner: burned ? null : checksummed(token.owner),
          burned,
          mintedBlock: token.mintedBlock,
          transfers: transfers.map((t) => ({
            blockNumber: t.blockNumber,
            transactionHash: t.transactionHash,
            logIndex: t.logIndex,
            from: checksummed(t.from),
            to: checksummed(t.to),
          })),
          ...(transfers.length === query.limit
            ? { cursor: encodeCursor({ b: last.blockNumber, i: last.logIndex }) }
            : {}),
          blockNumber: record.indexedBlock,
        };
      });
    });
  },
  document(registry) {
    registry.registerPath({
      method: "get",
      path: "/collections/{address}/tokens/{tokenId}",
      operationId: "getCollectionToken",
      tags: ["collections"],
      summary: "A token of an indexed collection: owner, block minted, and its transfers, oldest first",
      security: OPEN_SECURITY,
      request: { params: Path, query: Query },
      responses: {
        200: { description: "The token", content: { "application/json": { schema: TokenView } } },
        ...readErrors({ 404: errorResponse("COLLECTION_NOT_FOUND, TOKEN_NOT_FOUND") }),
      },
    });
  },
};
