import Router from "@koa/router";
import type { OpenAPIRegistry } from "../http/openapi";
import { parseInput } from "../http/validation";
import { addToWhitelistRoute } from "./add-to-whitelist";
import { deployRoute } from "./deploy";
import { mintRoute } from "./mint";
import { mintForFreeRoute } from "./mint-for-free";
import { openApiResponses, type NftDeps, type NftRoute } from "./route";
import { setCostRoute } from "./set-cost";
import { setPausedRoute } from "./set-paused";
import { tokenUriRoute } from "./token-uri";
import { totalSupplyRoute } from "./total-supply";
import { withdrawRoute } from "./withdraw";

export type { NftDeps };

export const NFT_ROUTES: NftRoute[] = [
  tokenUriRoute,
  mintRoute,
  mintForFreeRoute,
  addToWhitelistRoute,
  setPausedRoute,
  setCostRoute,
  totalSupplyRoute,
  withdrawRoute,
  deployRoute,
] as NftRoute[];

/** Every /nft operation: POST, JSON body validated by the operation's schema. */
export function createNftRouter(deps: NftDeps): Router {
  const router = new Router();
  for (const route of NFT_ROUTES) {
    router.post(route.path, async (ctx) => {
      const input = parseInput(route.body, ctx.request.body);
      const result = await route.handle(input, deps, ctx);
      ctx.status = result.status ?? route.successStatus ?? 200;
      ctx.body = result.body;
    });
  }
  return router;
}

export function registerNftOpenApi(registry: OpenAPIRegistry): void {
  registry.registerComponent("securitySchemes", "ApiKey", { type: "apiKey", in: "header", name: "API_KEY" });
  for (const route of NFT_ROUTES) {
    registry.registerPath({
      method: "post",
      path: route.path,
      tags: ["nft"],
      summary: route.summary,
      description: route.description,
      ...(route.apiKey ? { security: [{ ApiKey: [] }] } : {}),
      request: { body: { required: true, content: { "application/json": { schema: route.body } } } },
      responses: openApiResponses(route),
    });
  }
}
