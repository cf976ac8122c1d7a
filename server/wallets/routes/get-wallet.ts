import type Router from "@koa/router";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import {
  chainOfQuery,
  chainsOfKey,
  READ_ONE,
  walletOfPath,
  walletOnChains,
  walletViews,
  type WalletRouteDeps,
} from "./deps";
import { chainField } from "../../http/fields";
import { z } from "zod";
import { WalletDetail, WalletParams } from "./schemas";

/** How many unfinished operation ids a wallet's view lists. */
const LISTED_OPERATIONS = 100;

/** GET /wallets/{address}: one wallet, with the ids of its unfinished operations. */
export function mountGetWallet(router: Router, deps: WalletRouteDeps): void {
  router.get("/wallets/:address", deps.access.require(READ_ONE), async (ctx) => {
    const unit = chainOfQuery(ctx, deps);
    const wallet = await walletOfPath(ctx, deps);
    // A key limited to some chains reads only their per-chain fields.
    const units = chainsOfKey(ctx, deps);
    const [[view], ids, chains] = await Promise.all([
      walletViews([wallet], deps, unit),
      Promise.all(
        (unit ? [unit] : units).map((u) => deps.wallets.store.unfinishedIds(u.id, wallet.address, LISTED_OPERATIONS)),
      ),
      walletOnChains(wallet, deps, units),
    ]);
    ctx.body = { ...view, unfinishedOperationIds: ids.flat().slice(0, LISTED_OPERATIONS), chains };
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
    request: { params: WalletParams, query: z.object({ chain: chainField }) },
    responses: {
      200: { description: "The wallet", content: { "application/json": { schema: WalletDetail } } },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("WALLET_NOT_FOUND, CHAIN_NOT_FOUND"),
      429: errorResponse("RATE_LIMITED"),
      503: errorResponse("CHAIN_UNAVAILABLE"),
    },
  });
}
