import type { AddressInfo } from "node:net";
import { createServer, type RequestListener, type Server } from "node:http";
import path from "node:path";
import { getAddress, type JsonRpcProvider } from "ethers";
import { openAccess } from "./access";
import { createServiceApps } from "./service-app";
import { BlockFeed } from "./chain/block-feed";
import { ChainClient } from "./chain/chain-client";
import { connectProvider } from "./chain/provider";
import { bindStoreToChain, ChainBlockRecorder, type ChainDataCleared } from "./chain/store-binding";
import { CollectionIndex } from "./collections";
import { AllowlistStore } from "./drops/allowlist-store";
import { VoucherStore } from "./drops/voucher-store";
import type { Config } from "./config/config";
import type { Logger } from "./http/logger";
import { openDatabase } from "./db";
import { openEngine } from "./engine";
import { ServiceMetrics, type RpcObserver } from "./metrics/metrics";
import {
  cancelledJobsWithdrawn,
  DEFAULT_RUNNER_OPTIONS,
  JOB_OPERATION_KINDS,
  JobPlanner,
  JobRunner,
  JobStore,
} from "./jobs";
import { OPERATION_KINDS } from "./nft";
import { DrainableServer, ShutdownHooks, type ShutdownHook } from "./runtime/shutdown";
import { SqlUserStore } from "./users";
import { emitEvents, openWebhooks, type WebhookWorkerOptions } from "./webhooks";
import { LowBalanceWatcher, openWallets, resolveMasterKey, WalletStore, type MasterKeySource } from "./wallets";

export interface ConnectedChain {
  provider: JsonRpcProvider;
  chainId: bigint;
}

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
  chain: ChainClient;
  metrics: ServiceMetrics;
  /** Where the wallets' master key came from, for the banner (never the key). */
  masterKey: Pick<MasterKeySource, "from" | "file" | "created">;
  /** The collections index: the embedded chain registers the collection it deploys there. */
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

/** Connects to the chain and the user store, builds the app and listens: what `npm start` runs. */
export async function startService(
  config: Config,
  logger: Logger,
  options: StartOptions = {},
): Promise<RunningService> {
  const metrics = new ServiceMetrics();
  const { rpcUrl } = config;
  const connect =
    options.connect ??
    ((observer: RpcObserver) => {
      if (!rpcUrl) throw new Error("RPC_URL is not set");
      return connectProvider(rpcUrl, config.rpcTimeoutMs, observer);
    });
  const { provider, chainId } = await connect(metrics);
  const chain = new ChainClient(provider, {
    chainId,
    maxFeePerGas: config.maxFeePerGas,
    fundingHint: options.fundingHint,
  });
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: path.join(config.dataDir, "pglite") });
  let wallets;
  let chainDataCleared: ChainDataCleared | undefined;
  try {
    // Before anything reads the store: nothing from another chain is resumed, replayed or served.
    chainDataCleared = await bindStoreToChain(db, chain.rpc, chainId.toString(), options.freshChain === true);
    const masterKey = await resolveMasterKey(config.walletMasterKey, options.masterKeyFile, new WalletStore(db));
    wallets = await openWallets({ db, masterKey, pkcs11: config.pkcs11, logger });
  } catch (err) {
    await db.close().catch(() => {});
    provider.destroy();
    throw err;
  }
  const userStore = new SqlUserStore(db);
  // One head poll for the process: the engine's follower and the collection index share it.
  const blocks = new BlockFeed(chain.rpc, { pollMs: config.blockPollMs });
  const jobStore = new JobStore(db);
  const engine = await openEngine({
    chain,
    blocks,
    db,
    kinds: new Map([...OPERATION_KINDS, ...JOB_OPERATION_KINDS]),
    logger,
    metrics,
    // A wallet's operations are re-signed by the follower with no request, after a restart too.
    signers: wallets.directory(chain.signers),
    spendGuard: wallets.spendGuard,
    // A cancelled job's batch recorded before a crash and never broadcast is not sent after the cancel.
    resendGuard: cancelledJobsWithdrawn(jobStore),
    options: {
      chainId,
      confirmations: config.confirmations,
      txTimeoutMs: config.txTimeoutMs,
      resendBlocks: config.txResendBlocks,
      finalityBlocks: config.finalityBlocks,
      crashAt: config.crashAt,
      blockPollMs: config.blockPollMs,
    },
  });
  const collections = new CollectionIndex(db, chain, blocks, logger, {
    chainId,
    confirmations: config.confirmations,
    maxCollectionsPerKey: config.maxCollectionsPerKey,
  });
  // collection.transfer webhooks: written in the transaction that makes a transfer final, for the
  // news alone (a collection's history, read when it is first indexed, is not reported).
  collections.onTransfersFinal(async (tx, transfers) => {
    // One statement for the whole range: a block of 200 mints is 200 transfers.
    await emitEvents(
      tx,
      transfers
        .filter((t) => t.news)
        .map((t) => ({
          type: "collection.transfer" as const,
          data: {
            collection: getAddress(t.collection),
            tokenId: t.tokenId,
            from: getAddress(t.from),
            to: getAddress(t.to),
            blockNumber: t.blockNumber,
            blockHash: t.blockHash,
            transactionHash: t.transactionHash,
            logIndex: t.logIndex,
          },
          collection: t.collection,
          orderKey: `token:${t.collection}:${t.tokenId}`,
        })),
    );
  });
  await collections.start();
  const chainBlocks = new ChainBlockRecorder(db, chain.rpc, chainId.toString(), logger);
  chainBlocks.start();
  if (config.contractAddress) await collections.register(config.contractAddress, "config");
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
  // Emits wallet.low_balance when a held wallet's balance falls below its lowBalance.
  const lowBalance = new LowBalanceWatcher(
    db,
    chain,
    logger.child({ component: "low-balance" }),
    options.lowBalancePollMs,
  );
  const jobRunner = new JobRunner(
    jobStore,
    { engine, wallets, chain, logger: logger.child({ component: "jobs" }) },
    { ...DEFAULT_RUNNER_OPTIONS, concurrency: config.jobConcurrency },
  );
  const apps = createServiceApps({
    chain,
    engine,
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
    collections,
    drops: {
      allowlists: new AllowlistStore(db, chainId.toString()),
      vouchers: new VoucherStore(db, chainId.toString()),
      maxGasPerTx: config.maxGasPerTx,
    },
    jobs: { store: jobStore, runner: jobRunner, planner: new JobPlanner(chain, config.maxGasPerTx) },
  });

  const servers: DrainableServer[] = [];
  try {
    servers.push(await listen(apps.api.callback(), config.port, config.host));
    if (apps.demo && config.demoPort !== undefined)
      servers.push(await listen(apps.demo.callback(), config.demoPort, config.host));
  } catch (err) {
    await Promise.all(servers.map((s) => s.close(0)));
    await engine.stop();
    await lowBalance.stop();
    await webhooks.worker.stop();
    await collections.stop();
    await chainBlocks.stop();
    await blocks.stop();
    await wallets.close();
    await userStore.close();
    await db.close();
    provider.destroy();
    throw err;
  }
  const [api, demo] = servers;
  const hooks = new ShutdownHooks(logger);
  webhooks.worker.start();
  lowBalance.start();
  // Jobs left running by an earlier run (or another instance) go on with no request.
  await jobRunner.start();

  return {
    apiUrl: urlOf(api.server, config.host),
    demoUrl: demo ? urlOf(demo.server, config.host) : undefined,
    chain,
    metrics,
    masterKey: { from: wallets.masterKey.from, file: wallets.masterKey.file, created: wallets.masterKey.created },
    collections,
    chainDataCleared,
    onShutdown: (name, hook) => hooks.add(name, hook),
    async close() {
      const drained = await Promise.all(servers.map((s) => s.close(config.shutdownTimeoutMs)));
      const cut = drained.reduce((sum, { cut }) => sum + cut, 0);
      if (cut > 0) {
        logger.warn({ cut, shutdownTimeoutMs: config.shutdownTimeoutMs }, "requests still in flight were cut");
      }
      // Batches not yet sent stay claimable in the store: the next start (or another process) sends them.
      await jobRunner.stop();
      // What is unfinished stays in the store: the next start (or another process) follows it on.
      await engine.stop();
      // Attempts in flight are cut and given back: the next start (or another process) sends them.
      await lowBalance.stop();
      await webhooks.worker.stop();
      await collections.stop();
      await chainBlocks.stop();
      await blocks.stop();
      await wallets.close();
      await hooks.run();
      await userStore.close();
      await db.close();
      provider.destroy();
    },
  };
}

async function listen(handler: RequestListener, port: number, host: string): Promise<DrainableServer> {
  const server = createServer(handler);
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
