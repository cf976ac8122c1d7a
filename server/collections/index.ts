/** The collections index (API.md, "Collections"): every Transfer of the collections the service follows, and its reads. */
import Router from "@koa/router";
import type { OpenAPIRegistry } from "../http/openapi";
import type { CollectionRoute, CollectionRouteDeps } from "./routes/common";
import { getCollectionRoute } from "./routes/get-collection";
import { getTokenRoute } from "./routes/get-token";
import { getWalletRoute } from "./routes/get-wallet";
import { listOwnersRoute } from "./routes/list-owners";
import { registerCollectionRoute } from "./routes/register-collection";
export { REGISTER_ACCESS } from "./routes/register-collection";

export { CollectionIndex, MIN_BLOCK_WAIT_MS, type CollectionIndexOptions } from "./collection-index";
export { LIVE_WINDOW, type MetadataUpdateRead } from "./indexer";
export type { IndexedMetadataUpdate, MetadataUpdatesFinalHook } from "./metadata-events";
export {
  CollectionStore,
  ReorgDetected,
  ZERO_ADDRESS,
  type CollectionRecord,
  type IndexedTransfer,
  type RegisteredBy,
  type TransfersFinalHook,
} from "./store";
export type { CollectionRouteDeps };

const ROUTES: CollectionRoute[] = [
  registerCollectionRoute,
  getCollectionRoute,
  listOwnersRoute,
  getTokenRoute,
  getWalletRoute,
];

export function createCollectionsRouter(deps: CollectionRouteDeps): Router {
  const router = new Router();
  for (const route of ROUTES) route.mount(router, deps);
  return router;
}

export function registerCollectionsOpenApi(registry: OpenAPIRegistry): void {
  for (const route of ROUTES) route.document(registry);
}
