import type Koa from "koa";
import type { ChainClient } from "./chain/chain-client";
import type { SqlDriver } from "./db";
import type { TransactionEngine } from "./engine";
import { createKoaApp } from "./http/koa-app";
import type { Logger } from "./http/logger";
import { OpenAPIRegistry, buildOpenApiDocument } from "./http/openapi";
import { createServiceRouter, registerServiceOpenApi } from "./http/service-routes";
import { ServiceMetrics } from "./metrics/metrics";
import { createNftRouter, registerNftOpenApi } from "./nft";
import { createUserRouter, registerUserOpenApi, type UserStore } from "./users";

export interface ServiceAppDeps {
  chain: ChainClient;
  /** The write path of every /nft write. */
  engine: TransactionEngine;
  userStore: UserStore;
  logger: Logger;
  /** The key /nft/withdraw requires. */
  apiKey?: string;
  /** Serve /v2/user on an app of its own (DEMO_PORT) instead of beside /nft. */
  separateDemo?: boolean;
  /** Read the client address from X-Forwarded-For (TRUST_PROXY). */
  trustProxy?: boolean;
  /**
   * The service's SQL store: GET /health/ready asks it `SELECT 1`; on a PostgreSQL server the user
   * routes keep their abuse counters there.
   */
  database?: SqlDriver;
  /** Served on GET /metrics and fed by every request; a registry of its own when unset. */
  metrics?: ServiceMetrics;
}

export interface ServiceApps {
  /** /nft, /health, /openapi.json, /docs, and /v2/user unless `demo` is set. */
  api: Koa;
  /** /v2/user alone, when `separateDemo` is set. */
  demo?: Koa;
  /** What GET /metrics serves (`deps.metrics`, or the registry made for these apps). */
  metrics: ServiceMetrics;
}

/** Builds the service from its dependencies; tests and `npm start` wire the same code. */
export function createServiceApps(deps: ServiceAppDeps): ServiceApps {
  const registry = new OpenAPIRegistry();
  registerServiceOpenApi(registry);
  registerNftOpenApi(registry);
  registerUserOpenApi(registry);
  let document: object | undefined;
  const metrics = deps.metrics ?? new ServiceMetrics();
  const { database } = deps;
  const serviceRouter = createServiceRouter({
    chain: async () => ({ chainId: deps.chain.options.chainId.toString(), blockNumber: await deps.chain.ping() }),
    store: database ? () => database.query("SELECT 1") : undefined,
    metrics: async () => ({ contentType: metrics.contentType, text: await metrics.render() }),
    openApiDocument: () => (document ??= buildOpenApiDocument(registry)),
  });
  const nftRouter = createNftRouter({ chain: deps.chain, engine: deps.engine, apiKey: deps.apiKey });
  const userRouter = createUserRouter({ store: deps.userStore, database: deps.database });

  if (deps.separateDemo) {
    return {
      api: createKoaApp({
        logger: deps.logger,
        trustProxy: deps.trustProxy,
        metrics,
        routers: [serviceRouter, nftRouter],
      }),
      demo: createKoaApp({
        logger: deps.logger.child({ listener: "demo" }),
        trustProxy: deps.trustProxy,
        metrics,
        routers: [userRouter],
      }),
      metrics,
    };
  }
  return {
    api: createKoaApp({
      logger: deps.logger,
      trustProxy: deps.trustProxy,
      metrics,
      routers: [serviceRouter, nftRouter, userRouter],
    }),
    metrics,
  };
}
