import type Router from "@koa/router";
import { z } from "zod";
import type { AccessPrincipal } from "../../access";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { pageOf, PageQuery, pageRequest } from "../../http/paging";
import { parseInput } from "../../http/validation";
import { chainOfQuery, READ, walletViews, type WalletRouteDeps } from "./deps";
import { WalletView } from "./schemas";
import { chainField } from "../../http/fields";

/**
 * GET /wallets: the wallets the key may use (all of them for an unlimited key), oldest first, a page
 * at a time: the chain's answers for a page (balance and nonce of each wallet) come in one JSON-RPC batch.
 */
export function mountListWallets(router: Router, deps: WalletRouteDeps): void {
  router.get("/wallets", deps.access.require(READ), async (ctx) => {
    const page = pageRequest(parseInput(PageQuery, ctx.query));
    const principal = ctx.state.access as AccessPrincipal;
    const rows = await deps.wallets.store.page(principal.wallets, page);
    const { items, cursor } = pageOf(rows, page.limit, (w) => w.position);
    ctx.body = { wallets: await walletViews(items, deps, chainOfQuery(ctx, deps)), ...(cursor ? { cursor } : {}) };
  });
}

export function registerListWalletsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/wallets",
    operationId: "listWallets",
    tags: ["wallets"],
    summary:
      "The wallets this key may use, oldest first: label, kind, balance, next nonce, unfinished operations, policy",
    security: [{ AccessKey: [] }],
    request: { query: PageQuery.extend({ chain: chainField }) },
    responses: {
      200: {
        description: "A page of wallets; `cursor` fetches the next",
        content: {
          "application/json": { schema: z.object({ wallets: z.array(WalletView), cursor: z.string().optional() }) },
        },
      },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      429: errorResponse("RATE_LIMITED"),
      503: errorResponse("CHAIN_UNAVAILABLE"),
    },
  });
}
