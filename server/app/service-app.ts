import Router from "@koa/router";
import type Koa from "koa";
import { createAccessRouter, type AccessControl, type AuditLog } from "../access";
import { ApprovalDesk, createApprovalRouter, DEFAULT_APPROVAL_TTL_HOURS } from "../approvals";
import type { ChainClient } from "../chain/chain-client";
import { createCollectionsRouter, REGISTER_ACCESS, type CollectionIndex } from "../collections";
import type { SqlDriver } from "../db";
import type { TransactionEngine } from "../engine";
import { OperationList } from "../engine/operation-list";
import { createConsoleRouter } from "../console/console-routes";
import { createKoaApp } from "../http/koa-app";
import { chainDispatcher } from "../chains/dispatch";
import { chainStatuses, mountChainsRoute } from "../chains/status";
import { ChainRegistry, type RegisteredChain } from "../chains/registry";
import type { RpcUrlState } from "../chain/rpc-failover";
import type { Logger } from "../http/logger";
import { createDocsRouter, createServiceRouter } from "../http/service-routes";
import { createJobRouter, JOB_READ, JOB_WRITE, type JobPlanner, type JobRouteDeps, type JobRunner } from "../jobs";
import { ServiceMetrics } from "../metrics/metrics";
import { createDropsRouter } from "../drops/routes";
import { createMcpRouter } from "../mcp/http";
import { createNftRouter } from "../nft";
import { createMetadataRouter, type MetadataDeps } from "../metadata";
import type { DropsDeps } from "../drops/deps";
import { createUserRouter, type UserStore } from "../users";
import { createWebhookRouter, type WebhookRouteDeps } from "../webhooks";
import { createWalletRouter, type Wallets } from "../wallets";
import { openApiDocuments } from "../openapi/documents";

/**
 * What the service's routes use of a chain's unit, every feature's needs together (a ChainUnit has
 * them all; a test may route to a client and an engine alone).
 */
export interface RoutedChain extends RegisteredChain {
  readonly chainId: bigint;
  readonly client: ChainClient;
  readonly engine: TransactionEngine;
  readonly collections?: CollectionIndex;
  readonly drops?: DropsDeps;
  readonly jobs?: { runner: JobRunner; planner: JobPlanner };
  /** Hosted metadata and the tokenURI cache; unset = no metadata routes. */
  readonly metadata?: MetadataDeps;
  /** Each RPC URL's state (the failover transport's); unset for the embedded chain. */
  readonly rpcUrls?: () => RpcUrlState[];
  /** How many RPC URLs the chain has (0 for the embedded chain). */
  readonly urlCount?: number;
}

export interface ServiceAppDeps {
  /** Every configured chain's unit; unset = one chain of `chain` and `engine` (and the index, drops and jobs below). */
  chains?: ChainRegistry<RoutedChain>;
  /** The one chain when `chains` is unset. */
  chain?: ChainClient;
  /** The write path of every /nft write, when `chains` is unset. */
  engine?: TransactionEngine;
  userStore: UserStore;
  logger: Logger;
  /** Access keys: the root key (API_KEY), the keys made through /access-keys, REQUIRE_ACCESS_KEY. */
  access: AccessControl;
  /** Changes to keys, wallets, webhooks and policies. */
  audit: AuditLog;
  /** The wallets the service holds: `from` on /nft, and the /wallets routes; unset = none. */
  wallets?: Wallets;
  /** The collections index (/collections, and /nft/total-supply's wallet); unset = no /collections routes. */
  collections?: CollectionIndex;
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
  /** The /webhooks routes (openWebhooks); unset = not served. */
  webhooks?: WebhookRouteDeps;
  /** Drops: allowlists and vouchers the service keeps, MAX_GAS_PER_TX; unset = no allowlist or voucher reads. */
  drops?: DropsDeps;
  /** The /jobs routes (the store of jobs; the planner and runner when `chains` is unset); unset = not served. */
  jobs?: Pick<JobRouteDeps, "store"> & Partial<Pick<JobRouteDeps, "runner" | "planner">>;
  /** Hosted metadata and the tokenURI cache (openMetadata) when `chains` is unset; unset = no metadata routes. */
  metadata?: MetadataDeps;
  /** MCP: the /mcp endpoint; false = not served (unset = served). */
  mcp?: boolean;
  /** APPROVAL_TTL_HOURS: how long a held write waits (approvals need `database`). */
  approvalTtlHours?: number;
}

export interface ServiceApps {
  /** /nft, /health, /metrics, /openapi.json, /docs, and /v2/user unless `demo` is set. */
  api: Koa;
  /** /v2/user with its own /openapi.json and /docs, when `separateDemo` is set. */
  demo?: Koa;
  /** What GET /metrics serves (`deps.metrics`, or the registry made for these apps). */
  metrics: ServiceMetrics;
  /** Held writes and their decisions (with a store): the service runs its expiry sweep. */
  approvals?: ApprovalDesk;
}

const routers = (...list: (Router | undefined)[]): Router[] => list.filter((r): r is Router => r !== undefined);

/** Builds the service from its dependencies; tests and `npm start` wire the same code. */
export function createServiceApps(deps: ServiceAppDeps): ServiceApps {
  const documents = openApiDocuments(deps.separateDemo);
  const metrics = deps.metrics ?? new ServiceMetrics();
  const { database, wallets } = deps;
  const chains = deps.chains ?? oneChain(deps);
  const first = chains.units[0];
  const serviceRouter = createServiceRouter({
    chain: async () => ({ chainId: first.id, blockNumber: await first.client.ping() }),
    // One chain with several URLs: their states beside its one-chain answer (several chains: in `chains`).
    rpcUrls: chains.only?.rpcUrls && (chains.only.urlCount ?? 0) > 1 ? chains.only.rpcUrls : undefined,
    store: database ? () => database.query("SELECT 1") : undefined,
    chains: chains.units.length > 1 ? () => chainStatuses(chains) : undefined,
    metrics: async () => ({ contentType: metrics.contentType, text: await metrics.render() }),
    metricsAccess: deps.access.require({ scope: "metrics:read", key: "open" }),
  });
  mountChainsRoute(serviceRouter, chains, deps.access);
  // Writes held by their key's approval rule wait in the store: no store, no approvals.
  const approvals = database
    ? new ApprovalDesk({
        db: database,
        audit: deps.audit,
        access: deps.access,
        chains,
        wallets: deps.wallets,
        ttlMs: (deps.approvalTtlHours ?? DEFAULT_APPROVAL_TTL_HOURS) * 3_600_000,
        logger: deps.logger,
        jobs: deps.jobs?.store,
      })
    : undefined;
  const nftRouter = createNftRouter({
    chains,
    access: deps.access,
    wallets: deps.wallets,
    operationList: database ? new OperationList(database) : undefined,
    approvals,
  });
  const approvalRouter = approvals ? createApprovalRouter({ desk: approvals, access: deps.access }) : undefined;
  // Each chain's metadata routes, built once: /collections/…/metadata* and /metadata/{chainId}/… share them.
  const metadataRouters = new Map(
    chains.units.flatMap((unit) =>
      unit.metadata
        ? [
            [
              unit,
              createMetadataRouter({
                chain: unit.client,
                access: deps.access,
                metadata: unit.metadata,
                index: unit.collections,
              }),
            ] as const,
          ]
        : [],
    ),
  );
  // /collections/… (the index's routes and the drops' allowlists and vouchers) go to the chain the request names.
  const collectionsDispatch = first.collections
    ? chainDispatcher(
        chains,
        ["/collections"],
        (unit) => {
          const router = createCollectionsRouter({
            index: unit.collections!,
            chain: unit.client,
            access: deps.access,
            walletByLabel: wallets
              ? async (label) => (await wallets.store.findByLabel(label))?.address ?? null
              : undefined,
          });
          if (unit.drops)
            router.use(
              createDropsRouter({
                chain: unit.client,
                access: deps.access,
                drops: unit.drops,
                index: unit.collections!,
              }).routes(),
            );
          const metadataRouter = metadataRouters.get(unit);
          if (metadataRouter) router.use(metadataRouter.routes());
          return router;
        },
        {
          access: deps.access,
          // Writes under /collections always need a key: 401 before the chain (and any body) is read.
          admitFirst: (ctx) =>
            ctx.method === "POST" && ctx.path === "/collections"
              ? REGISTER_ACCESS
              : ctx.method === "GET" || ctx.method === "HEAD"
                ? undefined
                : { key: "always" },
        },
      )
    : undefined;
  // GET /metadata/{chainId}/… (public): the chain the path names. npm start answers it before Koa
  // (server/metadata/fast-path.ts); this serves it where that is not mounted.
  const metadataDispatch = first.metadata
    ? chainDispatcher(chains, ["/metadata"], (unit) => metadataRouters.get(unit) ?? new Router(), {
        // Public (no key): its chain is its path's.
        withoutChain: (ctx) => chains.find(ctx.path.split("/")[2]) ?? first,
      })
    : undefined;
  const accessRouter = database
    ? createAccessRouter({
        access: deps.access,
        audit: deps.audit,
        db: database,
        chainIdOf: (chain) => chains.resolve(chain).id,
      })
    : undefined;
  const webhookRouter = deps.webhooks
    ? createWebhookRouter({ chainIdOf: (chain) => chains.resolve(chain).id, ...deps.webhooks })
    : undefined;
  const walletRouter = deps.wallets
    ? createWalletRouter({ access: deps.access, audit: deps.audit, chains, wallets: deps.wallets })
    : undefined;
  const jobStore = deps.jobs?.store;
  // A job's reads by id go to any chain's router (the store is shared); what runs a job is its chain's.
  const jobsDispatch =
    jobStore && first.jobs
      ? chainDispatcher(
          chains,
          ["/jobs"],
          (unit) =>
            createJobRouter({
              store: jobStore,
              runner: unit.jobs!.runner,
              planner: unit.jobs!.planner,
              access: deps.access,
              chain: unit.client,
              wallets: deps.wallets,
              approvals: approvals ? { desk: approvals, chain: { id: unit.id, name: unit.name } } : undefined,
            }),
          {
            access: deps.access,
            // Every /jobs route needs a key; a job by id is checked against the key's chains by its route (visible()).
            admitFirst: (ctx) => (ctx.method === "GET" || ctx.method === "HEAD" ? JOB_READ : JOB_WRITE),
            withoutChain: (ctx) => (ctx.method === "POST" && ctx.path === "/jobs" ? undefined : first),
          },
        )
      : undefined;
  let api: Koa | undefined;
  const mcpRouter =
    deps.mcp === false
      ? undefined
      : createMcpRouter({
          access: deps.access,
          app: () => api!,
          logger: deps.logger,
          rootKey: deps.access.options.rootKey,
          audit: database ? { log: deps.audit, db: database } : undefined,
        });
  const userRouter = createUserRouter({ store: deps.userStore, database: deps.database });
  const dispatched = [collectionsDispatch, jobsDispatch, metadataDispatch].filter((d) => d !== undefined);
  const app = (logger: Logger, routers: Router[]) =>
    createKoaApp({ logger, trustProxy: deps.trustProxy, metrics, routers, dispatched });

  if (documents.demo) {
    api = app(deps.logger, [
      serviceRouter,
      createDocsRouter(documents.api, { apiListener: true }),
      nftRouter,
      ...routers(accessRouter, approvalRouter, webhookRouter, walletRouter, mcpRouter),
      createConsoleRouter(),
    ]);
    return {
      api,
      demo: app(deps.logger.child({ listener: "demo" }), [createDocsRouter(documents.demo), userRouter]),
      metrics,
      approvals,
    };
  }
  api = app(deps.logger, [
    serviceRouter,
    createDocsRouter(documents.api, { apiListener: true }),
    nftRouter,
    ...routers(accessRouter, approvalRouter, webhookRouter, walletRouter, mcpRouter),
    userRouter,
    createConsoleRouter(),
  ]);
  return { api, metrics, approvals };
}

/** The one chain of deps that name `chain` and `engine` rather than a registry (tests that wire an app by hand). */
function oneChain(deps: ServiceAppDeps): ChainRegistry<RoutedChain> {
  if (!deps.chain || !deps.engine) throw new Error("createServiceApps needs `chains`, or `chain` and `engine`");
  const chainId = deps.chain.options.chainId;
  return new ChainRegistry([
    {
      id: chainId.toString(),
      chainId,
      name: `chain-${chainId}`,
      client: deps.chain,
      engine: deps.engine,
      collections: deps.collections,
      drops: deps.drops,
      metadata: deps.metadata,
      jobs:
        deps.jobs?.runner && deps.jobs.planner ? { runner: deps.jobs.runner, planner: deps.jobs.planner } : undefined,
    },
  ]);
}
