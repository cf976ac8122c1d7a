import Router from "@koa/router";
import type { OpenAPIRegistry } from "../http/openapi";
import { mountCreateWallet, registerCreateWalletOpenApi } from "./routes/create-wallet";
import { mountDeleteWallet, registerDeleteWalletOpenApi } from "./routes/delete-wallet";
import type { WalletRouteDeps } from "./routes/deps";
import { mountGetWallet, registerGetWalletOpenApi } from "./routes/get-wallet";
import { mountListWallets, registerListWalletsOpenApi } from "./routes/list-wallets";
import { mountUpdateWallet, registerUpdateWalletOpenApi } from "./routes/update-wallet";

export type { WalletRouteDeps };

/** /wallets: hold, list, show, relabel or limit, and drop wallets (API.md, "Wallets"). */
export function createWalletRouter(deps: WalletRouteDeps): Router {
  const router = new Router();
  mountCreateWallet(router, deps);
  mountListWallets(router, deps);
  mountGetWallet(router, deps);
  mountUpdateWallet(router, deps);
  mountDeleteWallet(router, deps);
  return router;
}

export function registerWalletOpenApi(registry: OpenAPIRegistry): void {
  registerCreateWalletOpenApi(registry);
  registerListWalletsOpenApi(registry);
  registerGetWalletOpenApi(registry);
  registerUpdateWalletOpenApi(registry);
  registerDeleteWalletOpenApi(registry);
}
