import type Router from "@koa/router";
import { auditActor } from "../../access";
import { ApiError, walletNotFound } from "../../http/errors";
import { errorResponse, type OpenAPIRegistry } from "../../http/openapi";
import { MANAGE_ONE, walletOfPath, type WalletRouteDeps } from "./deps";
import { WalletParams } from "./schemas";

/**
 * DELETE /wallets/{address}: the wallet and its sealed key leave the store, with the audit event,
 * in one transaction; 409 WALLET_BUSY while operations of it are unfinished (the follower may
 * still need to re-sign them).
 */
export function mountDeleteWallet(router: Router, deps: WalletRouteDeps): void {
  const { access, audit, wallets } = deps;
  router.delete("/wallets/:address", access.require(MANAGE_ONE), async (ctx) => {
    const { address } = await walletOfPath(ctx, deps);
    await wallets.db.transaction(async (tx) => {
      const wallet = await wallets.store.lock(tx, address);
      if (!wallet) throw walletNotFound();
      // On any chain: the follower of each may still need to re-sign them.
      let unfinished = 0;
      for (const unit of deps.chains.units)
        unfinished += (await wallets.store.unfinished(unit.id, [address], tx)).get(address)?.count ?? 0;
      if (unfinished > 0) {
        throw new ApiError(
          "WALLET_BUSY",
          `The wallet has ${unfinished} unfinished operation${unfinished === 1 ? "" : "s"}: delete it once they are confirmed or failed`,
        );
      }
      await wallets.store.delete(tx, address);
      await audit.record(tx, auditActor(ctx), {
        action: "wallet.deleted",
        targetType: "wallet",
        targetId: address,
        details: { label: wallet.label, kind: wallet.kind },
      });
    });
    wallets.signers.forgetAll();
    ctx.status = 204;
  });
}

export function registerDeleteWalletOpenApi(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: "delete",
    path: "/wallets/{address}",
    operationId: "deleteWallet",
    tags: ["wallets"],
    summary: "Stop holding a wallet: its sealed key is erased from the store",
    description: "Scope wallets:manage. A pkcs11 wallet's key stays in its token.",
    security: [{ AccessKey: [] }],
    request: { params: WalletParams },
    responses: {
      204: { description: "Deleted" },
      400: errorResponse("VALIDATION_ERROR"),
      401: errorResponse("UNAUTHORIZED"),
      403: errorResponse("FORBIDDEN"),
      404: errorResponse("WALLET_NOT_FOUND"),
      409: errorResponse("WALLET_BUSY"),
      429: errorResponse("RATE_LIMITED"),
    },
  });
}
