import { z } from "zod";
import { ApiError } from "../../http/errors";
import { parseInput } from "../../http/validation";
import { address, decimal, uint } from "../../http/fields";
import { ZERO_ADDRESS } from "../store";
import { edition, editionHolders, editionTransfersOf } from "../edition-store";
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
  indexedStandard,
  limit,
  maxSupplyWithin,
  minBlock,
  readErrors,
  readIndexed,
  type CollectionRoute,
} from "./common";
import { chainStatus } from "../../chains/known-head";
import { errorResponse } from "../../http/openapi";

const Path = z.object({ address: address("address"), tokenId: uint("tokenId") });
const Query = ChainQuery.extend({ limit: limit(100, 1000), cursor: cursorParam, minBlock });
const After = z.object({
  b: z.number().int().min(0),
  i: z.number().int().min(0),
  k: z.number().int().min(0).optional(),
});
/** Holders of an edition in its answer: the rest page through /owners?tokenId= with `ownersCursor`. */
const EDITION_HOLDERS_PAGE = 100;

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

const EditionTokenView = z
  .object({
    chainId,
    tokenId: decimal,
    supply: decimal.openapi({ description: "Held by an address other than zero" }),
    maxSupply: decimal.optional().openapi({
      description:
        "The edition's max supply, from the chain (absent for an open edition, or while the chain is down or slow)",
    }),
    holders: z.number().int(),
    mintedBlock: z.number().int().nullable(),
    owners: z
      .array(z.object({ address: z.string(), amount: decimal }))
      .openapi({ description: "Its holders with their amounts, most first: the first 100" }),
    ownersCursor: z.string().optional().openapi({
      description: "Present when there are more holders: GET /collections/{address}/owners?tokenId=&cursor= goes on",
    }),
    transfers: z
      .array(Transfer.extend({ amount: decimal }))
      .openapi({ description: "Oldest first, one per id of a TransferBatch; paged with `cursor`" }),
    cursor: z.string().optional(),
    blockNumber,
    chainStatus,
  })
  .openapi("CollectionEditionToken");

/**
 * GET /collections/{address}/tokens/{tokenId}: its owner, the block it was minted in, and its
 * transfers; of an ERC-1155's edition, its supply and max supply and its holders with their amounts.
 */
export const getTokenRoute: CollectionRoute = {
  mount(router, deps) {
    router.get("/collections/:address/tokens/:tokenId", deps.access.require(READ_ACCESS), async (ctx) => {
      const { address: at, tokenId } = parseInput(Path, ctx.params);
      const query = parseInput(Query, ctx.query);
      const after = decodeCursor(query.cursor, After);
      const id = tokenId.toString();
      const { standard } = await indexedStandard(deps, at);
      if (standard === "erc1155") {
        // From the chain (fixed once the edition is made: read once), beside the snapshot: awaited
        // after it, so that a slow chain never holds it open.
        const maxSupplyRead = deps.chain.liveness.down
          ? Promise.resolve(undefined)
          : maxSupplyWithin(deps.chain, at, 1_000, id);
        const indexed = await readIndexed(deps, at, query.minBlock, async (db, record) => {
          const found = await edition(db, record.id, id);
          if (!found)
            throw new ApiError(
              "TOKEN_NOT_FOUND",
              `Edition ${id} of ${at} has no transfer up to block ${record.indexedBlock}`,
            );
          const [owners, transfers] = await Promise.all([
            editionHolders(db, record.id, id, EDITION_HOLDERS_PAGE),
            editionTransfersOf(
              db,
              record.id,
              id,
              query.limit,
              after ? { blockNumber: after.b, logIndex: after.i, batchIndex: after.k ?? 0 } : undefined,
            ),
          ]);
          const lastOwner = owners[owners.length - 1];
          const last = transfers[transfers.length - 1];
          return {
            tokenId: id,
            supply: found.supply.toString(),
            holders: Number(found.holders),
            mintedBlock: found.mintedBlock,
            owners: owners.map((o) => ({ address: checksummed(o.holder), amount: o.amount.toString() })),
            ...(owners.length === EDITION_HOLDERS_PAGE
              ? { ownersCursor: encodeCursor({ t: lastOwner.amount.toString(), o: lastOwner.holder }) }
              : {}),
            transfers: transfers.map((t) => ({
              blockNumber: t.blockNumber,
              transactionHash: t.transactionHash,
              logIndex: t.logIndex,
              from: checksummed(t.from),
              to: checksummed(t.to),
              amount: t.amount,
            })),
            ...(transfers.length === query.limit
              ? { cursor: encodeCursor({ b: last.blockNumber, i: last.logIndex, k: last.batchIndex }) }
              : {}),
            blockNumber: record.indexedBlock,
          };
        });
        const maxSupply = await maxSupplyRead;
        const { chainId: onChain, tokenId: editionId, supply, ...rest } = indexed;
        ctx.body = {
          chainId: onChain,
          tokenId: editionId,
          supply,
          ...(maxSupply !== undefined ? { maxSupply: maxSupply.toString() } : {}),
          ...rest,
        };
        return;
      }
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
      summary:
        "A token of an indexed collection: owner (an edition's max supply and holders with amounts), block minted, and its transfers, oldest first",
      security: OPEN_SECURITY,
      request: { params: Path, query: Query },
      responses: {
        200: {
          description: "The token (an ERC-721's), or the edition (an ERC-1155's)",
          content: { "application/json": { schema: z.union([TokenView, EditionTokenView]) } },
        },
        ...readErrors({ 404: errorResponse("COLLECTION_NOT_FOUND, TOKEN_NOT_FOUND") }),
      },
    });
  },
};
