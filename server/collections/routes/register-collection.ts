import { z } from "zod";
import { ApiError } from "../../http/errors";
import { readJsonBody } from "../../http/json-body";
import { errorResponse } from "../../http/openapi";
import { parseBody } from "../../http/validation";
import { address } from "../../nft/fields";
import { CollectionView, OPEN_SECURITY, collectionView, type CollectionRoute } from "./common";

const Body = z
  .object({
    address: address("address"),
    fromBlock: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({
      description: "Where its logs start (its deployment block); looked up on the chain when unset",
      example: 123,
    }),
  })
  .strict()
  .openapi("RegisterCollectionRequest");

const ACCESS = { scope: "nft:read", key: "open", bodyCollection: "address" } as const;

/**
 * POST /collections: index an ERC-721 the service did not deploy or act on. 201 when new, 200 when
 * it was already indexed (as it is: fromBlock only fills a start not known yet).
 */
export const registerCollectionRoute: CollectionRoute = {
  mount(router, deps) {
    router.post("/collections", async (ctx) => {
      await deps.access.admit(ctx, ACCESS);
      const input = parseBody(Body, await readJsonBody(ctx));
      deps.access.checkBody(ctx, ACCESS, input);
      await deps.chain.ensureCollection(input.address).catch((err: unknown) => {
        if (err instanceof ApiError && (err.code === "CONTRACT_NOT_FOUND" || err.code === "UNSUPPORTED_CONTRACT"))
          throw new ApiError("COLLECTION_NOT_FOUND", `${input.address} is not an ERC-721 collection: ${err.message}`);
        throw err;
      });
      const { record, created } = await deps.index.register(input.address, "api", input.fromBlock);
      ctx.status = created ? 201 : 200;
      ctx.body = collectionView(record, await deps.index.head());
    });
  },
  document(registry) {
    registry.registerPath({
      method: "post",
      path: "/collections",
      operationId: "registerCollection",
      tags: ["collections"],
      summary: "Index an ERC-721 collection (any, not only the reference one) from its deployment block",
      security: OPEN_SECURITY,
      request: { body: { required: true, content: { "application/json": { schema: Body } } } },
      responses: {
        201: {
          description: "Registered: the index starts",
          content: { "application/json": { schema: CollectionView } },
        },
        200: { description: "Already indexed", content: { "application/json": { schema: CollectionView } } },
        400: errorResponse("VALIDATION_ERROR"),
        401: errorResponse("UNAUTHORIZED"),
        403: errorResponse("FORBIDDEN"),
        404: errorResponse("COLLECTION_NOT_FOUND: no ERC-721 at the address"),
        429: errorResponse("RATE_LIMITED"),
        503: errorResponse("CHAIN_UNAVAILABLE, STORE_UNAVAILABLE"),
      },
    });
  },
};
