import type { AddressInfo } from "node:net";
import { createServer, type RequestListener, type Server } from "node:http";
import path from "node:path";
import { openAccess } from "../access";
import { createServiceApps } from "./service-app";
import type { ChainClient } from "../chain/chain-client";
import type { ChainDataCleared } from "../chain/store-binding";
import { bindAtStart, joinWhenAnswering } from "./chain-join";
import { buildChainUnit, reachChain, type ChainUnit, type ConnectedChain, type ReachedChain } from "./chain-unit";
import { ChainRegistry } from "../chains/registry";
import { chainSpecsOf } from "../chains/spec";
import type { CollectionIndex } from "../collections";
import type { Config } from "../config/config";
import type { Logger } from "../http/logger";
import { openDatabase } from "../db";
import { countOperationsSharingTransaction } from "../engine";
import { ServiceMetrics, type RpcObserver } from "../metrics/metrics";
import { JobStore } from "../jobs";
import { CarCache, clientAddress, publicRateLimit } from "../metadata";
import { metadataFastPath } from "../metadata/fast-path";
import { DrainableServer, ShutdownHooks, type ShutdownHook } from "../runtime/shutdown";
import { SqlUserStore } from "../users";
import { openWebhooks, type WebhookWorkerOptions } from "../webhooks";
import { openWallets, resolveMasterKey, WalletStore, type MasterKeySource } from "../wallets";

/** How often held writes past APPROVAL_TTL_HOURS are failed with APPROVAL_EXPIRED (besides on every read of them). */
const APPROVAL_SWEEP_MS = 60_000;

export type { ConnectedChain };

export interface StartOptions {
  /**
   * How to reach the chain, reporting each JSON-RPC call to `observer`; unset = HTTP(S) to
   * `config.rpcUrl`. The embedded chain passes its in-process provider here.
   */
  connect?: (observer: RpcObserver) => Promise<ConnectedChain>;
  /** Webhook delivery timing (tests and benchmarks shorten the retries); the defaults otherwise. */
  webhookWorker?: Partial<WebhookWorkerOptions>;
  /** How often wallets with a lowBalance have their balance read (5 s). */
  lowBalancePollMs?: number;
  /**
   * Where to keep a master key made for this data directory when WALLET_MASTER_KEY is not set
   * (npm start's embedded chain: $DATA_DIR/master.key); unset = no local wallets without the setting.
   */
  masterKeyFile?: string;
  /**
   * The chain is new at every start (npm start's embedded Hardhat network): what the store holds
   * about its chain id is cleared. Unset: the chain is checked against the blocks the store has seen.
   */
  freshChain?: boolean;
  /** How to fund an address on this chain (the embedded chain's hardhat_setBalance), for 402 messages. */
  fundingHint?: (address: string, wei: bigint) => string;
}

export interface RunningService {
  apiUrl: string;
  demoUrl?: string;
  /** The first configured chain's client (the only one in the one-chain forms). */
  chain: ChainClient;
  /** Every configured chain's unit. */
  chains: ChainRegistry<ChainUnit>;
  metrics: ServiceMetrics;
  /** Where the wallets' master key came from, for the banner (never the key). */
  masterKey: Pick<MasterKeySource, "from" | "file" | "created">;
  /** The first chain's collections index: the embedded chain registers the collection it deploys there. */
  collections: CollectionIndex;
  /** What the start cleared of a previous chain (freshChain), for the banner. */
  chainDataCleared?: ChainDataCleared;
  /**
   * Registers work to stop on shutdown (a background follower of transactions, say): hooks run
   * after the HTTP servers have drained and before the database closes, the last added first.
   */
  onShutdown(name: string, hook: ShutdownHook): void;
  /**
   * Stops gracefully: no new connections, requests in flight answered (connections cut only
   * after `config.shutdownTimeoutMs`), shutdown hooks, then the store and the provider closed.
   */
  close(): Promise<void>;
}

/** Connects to the chains and the user store, builds the app and listens: what `npm start` runs. */
export async function startService(
  config: Config,
  logger: Logger,
  options: StartOptions = {},
): Promise<RunningService> {
  const metrics = new ServiceMetrics();
  const specs = chainSpecsOf(config);
  // RPC_URL's chain waits for an answer (its id, then its blocks) this long at most.
  const deadline = Date.now() + config.chainStartTimeoutMs;
  // The entry's own chain (the embedded one) is the one chain of its configuration.
  const reached = await Promise.all(
    specs.map((spec) =>
      reachChain(spec, config, metrics, {
        connect: specs.length === 1 ? options.connect : undefined,
        fundingHint: options.fundingHint,
      }),
    ),
  );
  const destroyProviders = () => reached.forEach((c) => c.provider.destroy());
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: path.join(config.dataDir, "pglite") });
  metrics.watchSharedTransactions(() => countOperationsSharingTransaction(db));
  let wallets;
  let chainDataCleared: ChainDataCleared | undefined;
  /** Chains down at start: held until they answer and the store's check of their blocks passes. */
  const down: ReachedChain[] = [];
  try {
    // Before anything reads the store: nothing from another chain is resumed, replayed or served.
    for (const chain of reached) {
      const { joined, cleared } = await bindAtStart(db, chain, options.freshChain === true, deadline);
      chainDataCleared ??= cleared;
      if (!joined) down.push(chain);
    }
    const masterKey = await resolveMasterKey(config.walletMasterKey, options.masterKeyFile, new WalletStore(db));
    wallets = await openWallets({ db, masterKey, pkcs11: config.pkcs11, logger });
  } catch (err) {
    await db.close().catch(() => {});
    destroyProviders();
    throw err;
  }
  const userStore = new SqlUserStore(db);
  const jobStore = new JobStore(db);
  // PUBLIC_URL, else the API's own address once it listens (PORT=0 picks one).
  let publicUrl = config.publicUrl;
  const shared = {
    db,
    config,
    logger,
    metrics,
    wallets,
    jobStore,
    lowBalancePollMs: options.lowBalancePollMs,
    publicUrl: () => publicUrl ?? "",
    metadata: { limit: publicRateLimit(config.metadataRequestsPerMinute), cars: new CarCache() },
  };
  const units: ChainUnit[] = [];
  for (const chain of reached) units.push(await buildChainUnit(chain, shared));
  const chains = new ChainRegistry(units);
  const [first] = units;
  if (config.contractAddress) await first.collections.register(config.contractAddress, "config");
  const { access, audit } = openAccess(db, {
    rootKey: config.apiKey,
    requireAccessKey: config.requireAccessKey,
    logger,
  });
  const webhooks = await openWebhooks(db, {
    access,
    audit,
    logger,
    registry: metrics.registry,
    allowPrivate: config.webhookAllowPrivate,
    worker: options.webhookWorker,
    masterKey: wallets.masterKey.key,
  });
  const apps = createServiceApps({
    chains,
    userStore,
    logger,
    access,
    audit,
    webhooks: webhooks.routes,
    wallets,
    separateDemo: config.demoPort !== undefined,
    trustProxy: config.trustProxy,
    mcp: config.mcp,
    database: db,
    metrics,
    collections: first.collections,
    jobs: { store: jobStore },
    approvalTtlHours: config.approvalTtlHours,
  });

  const servers: DrainableServer[] = [];
  try {
    // Hosted documents are answered before Koa (server/metadata/fast-path.ts): marketplaces' load.
    servers.push(
      await listen(
        metadataFastPath(
          (chainId) => chains.find(chainId)?.metadata.service,
          (req) => shared.metadata.limit?.take(clientAddress(req, config.trustProxy)),
          apps.api.callback(),
          (err) =>
            logger.error(
              { err: err instanceof Error ? err.message : String(err) },
              "serving a metadata document failed",
            ),
        ),
        config.port,
        config.host,
        config,
      ),
    );
    if (apps.demo && config.demoPort !== undefined)
      servers.push(await listen(apps.demo.callback(), config.demoPort, config.host, config));
  } catch (err) {
    await Promise.all(servers.map((s) => s.close(0)));
    for (const unit of units) await unit.stop();
    await webhooks.worker.stop();
    await wallets.close();
    await userStore.close();
    await db.close();
    destroyProviders();
    throw err;
  }
  const [api, demo] = servers;
  publicUrl ??= urlOf(api.server, config.host);
  const hooks = new ShutdownHooks(logger);
  webhooks.worker.start();
  // Held writes past APPROVAL_TTL_HOURS fail on time, read or not.
  const stopApprovalSweep = apps.approvals?.startSweep(APPROVAL_SWEEP_MS);
  for (const unit of units) await unit.start();
  const joins = down.map((chain) => joinWhenAnswering(db, chain, logger.child({ chain: chain.name })));

  return {
    apiUrl: urlOf(api.server, config.host),
    demoUrl: demo ? urlOf(demo.server, config.host) : undefined,
    chain: first.client,
    chains,
    metrics,
    masterKey: { from: wallets.masterKey.from, file: wallets.masterKey.file, created: wallets.masterKey.created },
    collections: first.collections,
    chainDataCleared,
    onShutdown: (name, hook) => hooks.add(name, hook),
    async close() {
      await Promise.all(joins.map((stop) => stop()));
      const drained = await Promise.all(servers.map((s) => s.close(config.shutdownTimeoutMs)));
      const cut = drained.reduce((sum, { cut }) => sum + cut, 0);
      if (cut > 0) {
        logger.warn({ cut, shutdownTimeoutMs: config.shutdownTimeoutMs }, "requests still in flight were cut");
      }
      // Each chain's jobs, engine and index stop; what is unfinished stays in the store for the next start.
      await stopApprovalSweep?.();
      await Promise.all(units.map((unit) => unit.stop()));
      // Attempts in flight are cut and given back: the next start (or another process) sends them.
      await webhooks.worker.stop();
      await wallets.close();
      await hooks.run();
      await userStore.close();
      await db.close();
      destroyProviders();
    },
  };
}

/**
 * requestTimeout bounds the receipt of a request (headers and body), headersTimeout its headers: a
 * client that sends them slowly gets 408 and its connection closed. Neither bounds a response, so an
 * event stream (its GET received at once) is exempt; it has its own limit. Node checks them every
 * connectionsCheckingInterval (30 s by default): a quarter of the headers' bound keeps them near.
 */
async function listen(
  handler: RequestListener,
  port: number,
  host: string,
  timeouts: Pick<Config, "requestTimeoutMs" | "headersTimeoutMs">,
): Promise<DrainableServer> {
  const server = createServer(
    {
      requestTimeout: timeouts.requestTimeoutMs,
      headersTimeout: timeouts.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    handler,
  );
  server.keepAliveTimeout = 65_000;
  const drainable = new DrainableServer(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return drainable;
}

function urlOf(server: Server, host: string): string {
  const { port } = server.address() as AddressInfo;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
