import { z } from "zod";
import { ApiError } from "../../http/errors";
import { readJsonBody } from "../../http/json-body";
import { errorResponse } from "../../http/openapi";
import { parseBody } from "../../http/validation";
import type { AccessPrincipal } from "../../access";
import { chainField } from "../../http/fields";
import { address } from "../../http/fields";
import { CollectionView, collectionView, type CollectionRoute } from "./common";

const Body = z
  .object({
    address: address("address"),
    chain: chainField,
    fromBlock: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().openapi({
      description: "Where its logs start (its deployment block); looked up on the chain when unset",
      example: 123,
    }),
  })
  .strict()
  .openapi("RegisterCollectionRequest");

/** Always a key, in every mode: registering makes the service read a collection's whole history. */
export const REGISTER_ACCESS = { scope: "nft:read", key: "always", bodyCollection: "address" } as const;

/**
 * POST /collections: index an ERC-721 or ERC-1155 the service did not deploy or act on. 201 when new, 200 when
 * it was already indexed (as it is: fromBlock only fills a start not known yet). A key registers at
 * most MAX_COLLECTIONS_PER_KEY collections new to the index.
 */
export const registerCollectionRoute: CollectionRoute = {
  mount(router, deps) {
    router.post("/collections", async (ctx) => {
      await deps.access.admit(ctx, REGISTER_ACCESS);
      const input = parseBody(Body, await readJsonBody(ctx));
      deps.access.checkBody(ctx, REGISTER_ACCESS, input);
      await deps.chain.ensureCollection(input.address).catch((err: unknown) => {
        if (err instanceof ApiError && (err.code === "CONTRACT_NOT_FOUND" || err.code === "UNSUPPORTED_CONTRACT"))
          throw new ApiError(
            "COLLECTION_NOT_FOUND",
            `${input.address} is neither an ERC-721 nor an ERC-1155: ${err.message}`,
          );
        throw err;
      });
      const principal = ctx.state.access as AccessPrincipal;
      const registered = await deps.index.registerByKey(input.address, principal.keyId ?? "root", input.fromBlock);
      if (!registered)
        throw new ApiError(
          "FORBIDDEN",
          "This access key has registered as many collections as MAX_COLLECTIONS_PER_KEY allows",
          [{ path: "address", message: "past MAX_COLLECTIONS_PER_KEY for this key" }],
        );
      const { record, created } = registered;
      ctx.status = created ? 201 : 200;
      // Its name and symbol, as GET answers them: a new row has neither until the indexer reads them.
      const standard = await deps.index.standardOf(record);
      ctx.body = collectionView(await deps.index.withMetadata(record), await deps.chain.liveness.now(), standard);
    });
  },
  document(registry) {
    registry.registerPath({
      method: "post",
      path: "/collections",
      operationId: "registerCollection",
      tags: ["collections"],
      summary: "Index an ERC-721 collection (any, not only the reference one) from its deployment block",
      description:
        "Needs an access key with nft:read in every mode; a key registers at most MAX_COLLECTIONS_PER_KEY (1,000) collections new to the index (403 past it).",
      security: [{ AccessKey: [] }],
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
