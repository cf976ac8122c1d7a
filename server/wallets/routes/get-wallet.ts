import type Router from "@koa/router";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { READ_ONE, walletOfPath, walletViews, type WalletRouteDeps } from "./deps";
import { WalletDetail, WalletParams } from "./schemas";

/** How many unfinished operation ids a wallet's view lists. */
const LISTED_OPERATIONS = 100;

/** GET /wallets/{address}: one wallet, with the ids of its unfinished operations. */
export function mountGetWallet(router: Router, deps: WalletRouteDeps): void {
  router.get("/wallets/:address", deps.access.require(READ_ONE), async (ctx) => {
    const wallet = await walletOfPath(ctx, deps);
    const chainId = deps.chain.options.chainId.toString();
    const [[view], ids] = await Promise.all([
      walletViews([wallet], deps),
      deps.wallets.store.unfinishedIds(chainId, wallet.address, LISTED_OPERATIONS),
    ]);
    ctx.body = { ...view, unfinishedOperationIds: ids };
  });
}

export function registerGetWalletOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "get",
    path: "/wallets/{address}",
    operationId: "getWallet",
    tags: ["wallets"],
    summary: "One wallet: label, kind, balance, next nonce, unfinished operations, policy",
    security: [{ AccessKey: [] }],
    request: { params: WalletParams },
    responses: {
      200: { description: "The wallet", content: { "application/json": { schema: WalletDetail } } },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("WALLET_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
      503: errorResponse("CHAIN_UNAVAILABLE"),
    },
  });
}
