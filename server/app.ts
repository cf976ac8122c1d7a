import type Koa from "koa";
import type { ChainClient } from "./chain/chain-client";
import type { TransactionEngine } from "./engine";
import type { SqlDriver } from "./db";
import { createHttpApp } from "./http/app";
import type { Logger } from "./http/logger";
import { OpenAPIRegistry, buildOpenApiDocument } from "./http/openapi";
import { createServiceRouter, registerServiceOpenApi } from "./http/service-routes";
import { createNftRouter, registerNftOpenApi } from "./nft";
import { createUserRouter, registerUserOpenApi, type UserStore } from "./users";

export interface AppDeps {
  chain: ChainClient;
  /** The write path of every /nft write. */
  engine: TransactionEngine;
  userStore: UserStore;
  /** The service's database: on a PostgreSQL server, the user routes keep their abuse counters there. */
  database?: SqlDriver;
  logger: Logger;
  /** The key /nft/withdraw requires. */
  apiKey?: string;
  /** Serve /v2/user on an app of its own (DEMO_PORT) instead of beside /nft. */
  separateDemo?: boolean;
  /** Read the client address from X-Forwarded-For (TRUST_PROXY). */
  trustProxy?: boolean;
}

export interface Apps {
  /** /nft, /health, /openapi.json, /docs, and /v2/user unless `demo` is set. */
  api: Koa;
  /** /v2/user alone, when `separateDemo` is set. */
  demo?: Koa;
}

/** Builds the service from its dependencies; tests and `npm start` wire the same code. */
export function createApp(deps: AppDeps): Apps {
  const registry = new OpenAPIRegistry();
  registerServiceOpenApi(registry);
  registerNftOpenApi(registry);
  registerUserOpenApi(registry);
  let document: object | undefined;
  const serviceRouter = createServiceRouter({
    health: async () => ({ chainId: deps.chain.options.chainId.toString(), blockNumber: await deps.chain.ping() }),
    openApiDocument: () => (document ??= buildOpenApiDocument(registry)),
  });
  const nftRouter = createNftRouter({ chain: deps.chain, engine: deps.engine, apiKey: deps.apiKey });
  const userRouter = createUserRouter({ store: deps.userStore, database: deps.database });

  if (deps.separateDemo) {
    return {
      api: createHttpApp({ logger: deps.logger, trustProxy: deps.trustProxy, routers: [serviceRouter, nftRouter] }),
      demo: createHttpApp({
        logger: deps.logger.child({ listener: "demo" }),
        trustProxy: deps.trustProxy,
        routers: [userRouter],
      }),
    };
  }
  return {
    api: createHttpApp({
      logger: deps.logger,
      trustProxy: deps.trustProxy,
      routers: [serviceRouter, nftRouter, userRouter],
    }),
  };
}
