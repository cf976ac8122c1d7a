import type Router from "@koa/router";
import { z } from "zod";
import { allows, type AccessPrincipal } from "../../access";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { READ, walletViews, type WalletRouteDeps } from "./deps";
import { WalletView } from "./schemas";

/** GET /wallets: the wallets the key may use (all of them for an unlimited key), oldest first. */
export function mountListWallets(router: Router, deps: WalletRouteDeps): void {
  router.get("/wallets", deps.access.require(READ), async (ctx) => {
    const principal = ctx.state.access as AccessPrincipal;
    const visible = (await deps.wallets.store.list()).filter((w) => allows(principal, { wallet: w.address }));
    ctx.body = { wallets: await walletViews(visible, deps) };
  });
}

export function registerListWalletsOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/wallets",
    operationId: "listWallets",
    tags: ["wallets"],
    summary: "The wallets this key may use: label, kind, balance, next nonce, unfinished operations, policy",
    security: [{ AccessKey: [] }],
    responses: {
      200: {
        description: "The wallets",
        content: { "application/json": { schema: z.object({ wallets: z.array(WalletView) }) } },
      },
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      429: errorResponse("RATE_LIMITED"),
      503: errorResponse("CHAIN_UNAVAILABLE"),
    },
  });
}
