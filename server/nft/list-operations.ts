import type Router from "@koa/router";
import { z } from "zod";
import type { AccessControl, AccessPrincipal } from "../access";
import { chainField } from "../http/fields";
import type { ChainClient } from "../chain/chain-client";
import type { ChainRegistry, RegisteredChain } from "../chains/registry";
import { chainStatus, headView } from "../chains/known-head";
import { decodeOpaqueCursor as decodeCursor, encodeOpaqueCursor as encodeCursor } from "../http/paging";
import { OperationView, operationView } from "../engine";
import type { OperationList, OperationReader } from "../engine/operation-list";
import { errorResponse, type OpenAPIRegistry } from "../http/openapi";
import { parseInput } from "../http/validation";
import { address } from "./fields";

export interface OperationListDeps {
  list: OperationList;
  chains: ChainRegistry<RegisteredChain & { readonly client: ChainClient }>;
  access: AccessControl;
}

/** A list names no operation, so unlike GET /nft/operations/{id} it always needs a key. */
export const LIST_ACCESS = { scope: "nft:read", key: "always" } as const;

const Query = z.object({
  status: z.enum(["queued", "sent", "confirmed", "failed", "awaiting_approval"]).optional(),
  wallet: address("wallet").optional().openapi({ description: "Only operations signed by this address" }),
  collection: address("collection")
    .optional()
    .openapi({ description: "Only operations on this collection (and its deployment)" }),
  cursor: z
    .string()
    .max(300)
    .optional()
    .openapi({ description: "The `cursor` of the previous page, as it gave it (any other string is refused)" }),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  chain: chainField.openapi({ description: "Only this chain's operations (by id or name); unset = every chain" }),
});

/** Where a page ended: the last operation's created_at (microseconds, as the store writes it) and id. */
const After = z.object({ t: z.string().min(1).max(64), i: z.string().regex(/^[0-9a-f-]{36}$/) });

const OperationsPage = z
  .object({
    operations: z.array(OperationView),
    cursor: z.string().optional().openapi({ description: "Present when there may be more: pass it for the next page" }),
    blockNumber: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The chain head when the page was read (the last one known while the chain is down)" }),
    chainStatus,
  })
  .openapi("OperationsPage");

/**
 * GET /nft/operations: newest first, paged, filtered by status, wallet and collection. A key reads
 * the operations it could have made, as GET /nft/operations/{id} decides for one; the root key, all.
 */
export function mountListOperations(router: Router, deps: OperationListDeps): void {
  router.get("/nft/operations", deps.access.require(LIST_ACCESS), async (ctx) => {
    const query = parseInput(Query, ctx.query);
    const after = decodeCursor(query.cursor, After);
    const principal = ctx.state.access as AccessPrincipal;
    // One chain configured, or one named: its operations and head; several and none named: all, with the first chain's head.
    const unit = query.chain !== undefined ? deps.chains.resolve(query.chain) : deps.chains.only;
    if (unit) deps.access.checkChain(ctx, unit);
    const [page, head] = await Promise.all([
      deps.list.page({
        chainId: unit?.id,
        chainIds: principal.chains ?? undefined,
        reader: readerOf(principal),
        status: query.status,
        wallet: query.wallet,
        collection: query.collection,
        after: after ? { createdAt: after.t, id: after.i } : undefined,
        limit: query.limit,
      }),
      // The store answers alone: a chain that is down costs no wait (its last head, chainStatus down).
      (unit ?? deps.chains.units[0]).client.liveness.now(),
    ]);
    ctx.body = {
      operations: page.operations.map(operationView),
      ...(page.next ? { cursor: encodeCursor({ t: page.next.createdAt, i: page.next.id }) } : {}),
      ...headView(head),
    };
  });
}

function readerOf(principal: AccessPrincipal): OperationReader {
  if (principal.keyId === null) return { all: true };
  return { all: false, keyId: principal.keyId, wallets: principal.wallets, collections: principal.collections };
}

export function registerListOperationsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/nft/operations",
    operationId: "listOperations",
    tags: ["nft"],
    summary: "Operations, newest first: those this key could have made (the root key: all)",
    description:
      "Paged with `limit` (≤ 500) and `cursor`; each as GET /nft/operations/{operationId} shows it. Needs an access key with nft:read.",
    security: [{ AccessKey: [] }],
    request: { query: Query },
    responses: {
      200: { description: "A page of operations", content: { "application/json": { schema: OperationsPage } } },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      429: errorResponse("RATE_LIMITED"),
      503: errorResponse("CHAIN_UNAVAILABLE, STORE_UNAVAILABLE"),
    },
  });
}
