import { z } from "zod";
import { parseInput } from "../../http/validation";
import { ApiError } from "../../http/errors";
import { decimal, uint } from "../../http/fields";
import { editionHolders, editionOwners } from "../edition-store";
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
  indexedStandard,
  limit,
  minBlock,
  readErrors,
  readIndexed,
  type CollectionRoute,
} from "./common";
import { chainStatus } from "../../chains/known-head";

const Query = ChainQuery.extend({
  limit: limit(100, 1000),
  cursor: cursorParam,
  minBlock,
  tokenId: uint("tokenId")
    .optional()
    .openapi({ description: "ERC-1155 only: the holders of this edition alone", example: "1" }),
});
/** Where a page ended: the last holder's count and address. */
const After = z.object({ t: z.string().regex(/^\d{1,78}$/), o: z.string().regex(/^0x[0-9a-f]{40}$/) });

const OwnersPage = z
  .object({
    chainId,
    owners: z.array(
      z.object({
        address: z.string(),
        tokens: decimal.openapi({ description: "How many it holds (of an ERC-1155: its amounts together)" }),
        amount: decimal.optional().openapi({
          description: "ERC-1155: the amount it holds (of the edition `tokenId`, or of every edition)",
        }),
        editions: z
          .number()
          .int()
          .optional()
          .openapi({ description: "ERC-1155, every edition: how many it holds some of" }),
      }),
    ),
    cursor: z
      .string()
      .optional()
      .openapi({ description: "Present when there may be more: pass it to get the next page" }),
    blockNumber,
    chainStatus,
  })
  .openapi("CollectionOwners");

/**
 * GET /collections/{address}/owners: holders and how many tokens each holds, most first, paged; of
 * an ERC-1155, with amounts, of every edition or of one (`?tokenId=`).
 */
export const listOwnersRoute: CollectionRoute = {
  mount(router, deps) {
    router.get("/collections/:address/owners", deps.access.require(READ_ACCESS), async (ctx) => {
      const { address } = parseInput(CollectionPath, ctx.params);
      const query = parseInput(Query, ctx.query);
      const after = decodeCursor(query.cursor, After);
      const { standard } = await indexedStandard(deps, address);
      if (standard === "erc1155") {
        ctx.body = await readIndexed(deps, address, query.minBlock, async (db, record) => {
          const from = after ? { amount: BigInt(after.t), holder: after.o } : undefined;
          const tokenId = query.tokenId?.toString();
          const owners =
            tokenId === undefined
              ? await editionOwners(db, record.id, query.limit, from)
              : await editionHolders(db, record.id, tokenId, query.limit, from);
          const last = owners[owners.length - 1];
          return {
            owners: owners.map((o) => ({
              address: checksummed(o.holder),
              tokens: o.amount.toString(),
              amount: o.amount.toString(),
              ...("editions" in o ? { editions: Number(o.editions) } : {}),
            })),
            ...(owners.length === query.limit
              ? { cursor: encodeCursor({ t: last.amount.toString(), o: last.holder }) }
              : {}),
            blockNumber: record.indexedBlock,
          };
        });
        return;
      }
      if (query.tokenId !== undefined)
        throw new ApiError("VALIDATION_ERROR", "tokenId is for an ERC-1155's editions; this is an ERC-721", [
          { path: "tokenId", message: "only on an ERC-1155 (erc721 here)" },
        ]);
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
      summary:
        "Holders of an indexed collection and how many tokens each holds, most first, paged (an ERC-1155's with amounts, `?tokenId=` for one edition)",
      security: OPEN_SECURITY,
      request: { params: CollectionPath, query: Query },
      responses: {
        200: { description: "A page of holders", content: { "application/json": { schema: OwnersPage } } },
        ...readErrors(),
      },
    });
  },
};
