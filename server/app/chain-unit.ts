/**
 * What one chain has, in one place: its client (provider, signer pool, fee oracle), block feed,
 * engine (and its follower), collection index, the recorder of its blocks in the store, the
 * low-balance watcher of its wallets, its job runner and planner, and its drops stores. Every
 * configured chain gets one unit from `buildChainUnit`; the registry keeps them for the routes.
 */
import { getAddress, type JsonRpcProvider } from "ethers";
import { BlockFeed } from "../chain/block-feed";
import type { HeadSource } from "../chain/head-subscription";
import { ChainClient } from "../chain/chain-client";
import { connectRpcUrls, type ChainGate } from "../chain/provider";
import type { RpcUrlState } from "../chain/rpc-failover";
import { ChainBlockRecorder } from "../chain/store-binding";
import { CollectionIndex } from "../collections";
import type { Config } from "../config/config";
import type { SqlDriver } from "../db";
import { AllowlistStore } from "../drops/allowlist-store";
import { VoucherStore } from "../drops/voucher-store";
import { openEngine, type TransactionEngine } from "../engine";
import type { Logger } from "../http/logger";
import {
  cancelledJobsWithdrawn,
  DEFAULT_RUNNER_OPTIONS,
  JOB_OPERATION_KINDS,
  JobPlanner,
  JobRunner,
  type JobStore,
} from "../jobs";
import type { ChainMetrics, ServiceMetrics, RpcObserver } from "../metrics/metrics";
import { openMetadata, type CarCache, type MetadataDeps, type PublicRateLimit } from "../metadata";
import { OPERATION_KINDS } from "../nft";
import type { DropsDeps } from "../drops/deps";
import { LowBalanceWatcher, type Wallets } from "../wallets";
import { emitEvents, eventWanted } from "../webhooks";
import { chainNameOf, type ChainSpec } from "../chains/spec";
import type { ConnectedChain } from "../runtime/chain-source";

export type { ConnectedChain };

/** A chain reached (its id known) but not yet wired: the store is bound to it before anything reads the store. */
export interface ReachedChain {
  spec: ChainSpec;
  name: string;
  chainId: bigint;
  provider: JsonRpcProvider;
  client: ChainClient;
  rpcUrls?: () => RpcUrlState[];
  /** What announces new heads, where the chain offers it (see BlockFeed). */
  heads?: HeadSource;
  /** How the chain joins when it did not answer at start; unset for the embedded chain. */
  gate?: ChainGate;
  /** The service's metrics labelled with this chain's id. */
  metrics: ChainMetrics;
}

/** What every unit shares: the store, the wallets, the logger and metrics, the settings that are not per chain. */
export interface SharedParts {
  db: SqlDriver;
  config: Config;
  logger: Logger;
  metrics: ServiceMetrics;
  wallets: Wallets;
  jobStore: JobStore;
  lowBalancePollMs?: number;
  /** Where the world reaches the service (PUBLIC_URL, else its own address once it listens). */
  publicUrl(): string;
  /** What every chain's hosted metadata shares: the public documents' limit, the CARs built. */
  metadata: { limit?: PublicRateLimit; cars: CarCache };
}

export interface ChainUnit {
  /** The chain id as a decimal string: how the store and the answers name it. */
  readonly id: string;
  readonly chainId: bigint;
  readonly name: string;
  readonly spec: ChainSpec;
  readonly provider: JsonRpcProvider;
  readonly client: ChainClient;
  readonly blocks: BlockFeed;
  readonly engine: TransactionEngine;
  readonly collections: CollectionIndex;
  readonly drops: DropsDeps;
  readonly jobs: { runner: JobRunner; planner: JobPlanner };
  /** Hosted metadata and the tokenURI cache of this chain's collections. */
  readonly metadata: MetadataDeps;
  /** Each RPC URL's state (masked), for /health, GET /chains; unset for the embedded chain. */
  readonly rpcUrls?: () => RpcUrlState[];
  /** How many RPC URLs the chain has. */
  readonly urlCount: number;
  /** Starts the unit's background work that may wait for the rest of the service (webhooks, jobs). */
  start(): Promise<void>;
  /** Stops the unit's background work; what is unfinished stays in the store. */
  stop(): Promise<void>;
}

/**
 * Reaches a chain: `connect` (the embedded chain's in-process provider) or its RPC URLs through the
 * failover transport, which asks every URL eth_chainId and stops the start on one that answers
 * another id than the one configured.
 */
export async function reachChain(
  spec: ChainSpec,
  config: Pick<Config, "rpcTimeoutMs" | "rpcMaxLagBlocks" | "chainStartTimeoutMs">,
  observer: ServiceMetrics,
  options: { connect?: (observer: RpcObserver) => Promise<ConnectedChain>; fundingHint?: ChainFundingHint } = {},
): Promise<ReachedChain> {
  const connect =
    options.connect ??
    ((o: RpcObserver) => {
      if (spec.rpcUrls.length === 0) throw new Error("RPC_URL is not set");
      return connectRpcUrls({
        chainId: spec.id,
        rpcUrls: spec.rpcUrls,
        wsUrl: spec.wsUrl,
        timeoutMs: config.rpcTimeoutMs,
        maxLagBlocks: config.rpcMaxLagBlocks,
        // Only a chain whose id is unknown waits for an answer: one CHAINS names starts down instead.
        startTimeoutMs: spec.id === undefined ? config.chainStartTimeoutMs : 0,
        observer: o,
        urlObserver: observer,
      }).catch((err: unknown) => {
        // One line naming the chain (the transport's names the URL, masked).
        throw spec.id === undefined ? err : new Error(`chain ${chainNameOf(spec, spec.id)}: ${(err as Error).message}`);
      });
    });
  const metrics = observer.forChain(spec.id?.toString());
  const { provider, chainId, rpcUrls, heads, gate } = await connect(metrics);
  if (spec.id === undefined) metrics.label(chainId.toString());
  if (spec.id !== undefined && spec.id !== chainId) {
    provider.destroy();
    throw new Error(`chain ${chainNameOf(spec, spec.id)}: its RPC URL answers chain id ${chainId}, not ${spec.id}`);
  }
  const client = new ChainClient(provider, {
    chainId,
    maxFeePerGas: spec.maxFeePerGas,
    fundingHint: options.fundingHint,
  });
  return { spec, name: chainNameOf(spec, chainId), chainId, provider, client, rpcUrls, heads, gate, metrics };
}

export type ChainFundingHint = (address: string, wei: bigint) => string;

/** Builds everything one chain has, on the shared store and wallets. */
export async function buildChainUnit(chain: ReachedChain, shared: SharedParts): Promise<ChainUnit> {
  const { db, config, wallets, jobStore } = shared;
  const { spec, client, chainId, provider } = chain;
  const id = chainId.toString();
  const logger = shared.logger.child({ chain: chain.name });
  // One head poll per chain: the engine's follower and the collection index share it.
  const blocks = new BlockFeed(client.rpc, {
    pollMs: config.blockPollMs,
    liveness: client.liveness,
    heads: chain.heads,
    onSeen: (lagSeconds) => chain.metrics.blockSeen(lagSeconds),
  });
  client.fees.followHeads(() => blocks.baseFee());
  client.settledViews.followHeads(blocks);
  blocks.own.onProven((block, logs) => client.learnSettled(block, logs));
  const engine = await openEngine({
    chain: client,
    blocks,
    db,
    kinds: new Map([...OPERATION_KINDS, ...JOB_OPERATION_KINDS]),
    logger,
    metrics: chain.metrics,
    // A wallet's operations are re-signed by the follower with no request, after a restart too.
    signers: wallets.directory(client.signers),
    spendGuard: wallets.spendGuard(id),
    // A cancelled job's batch recorded before a crash and never broadcast is not sent after the cancel.
    resendGuard: cancelledJobsWithdrawn(jobStore),
    options: {
      chainId,
      confirmations: spec.confirmations,
      txTimeoutMs: config.txTimeoutMs,
      resendBlocks: spec.txResendBlocks,
      finalityBlocks: spec.finalityBlocks,
      crashAt: config.crashAt,
      crashPauseMs: config.crashPauseMs,
      blockPollMs: config.blockPollMs,
    },
  });
  const collections = new CollectionIndex(db, client, blocks, logger, {
    chainId,
    confirmations: spec.confirmations,
    maxCollectionsPerKey: config.maxCollectionsPerKey,
  });
  // collection.transfer webhooks: written in the transaction that makes a transfer final, for the
  // news alone (a collection's history, read when it is first indexed, is not reported).
  collections.onTransfersFinal(async (tx, final) => {
    // Nothing read or built while no endpoint takes them: a range is thousands of transfers, three checksums each.
    if (!(await eventWanted(tx, "collection.transfer"))) return;
    const transfers = await final();
    // One statement for the whole range: a block of 200 mints is 200 transfers.
    await emitEvents(
      tx,
      transfers.map((t) => ({
        type: "collection.transfer" as const,
        data: {
          chainId: id,
          collection: getAddress(t.collection),
          tokenId: t.tokenId,
          // An edition's move: one event per id and holder of a TransferBatch, each with its amount.
          ...(t.amount !== undefined ? { amount: t.amount } : {}),
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
  // collection.metadata_updated webhooks: every ERC-4906 event read of any collection, once final.
  collections.onMetadataUpdatesFinal(async (tx, updates) => {
    if (!(await eventWanted(tx, "collection.metadata_updated"))) return;
    await emitEvents(
      tx,
      updates.map((u) => ({
        type: "collection.metadata_updated" as const,
        data: {
          chainId: u.chainId,
          address: getAddress(u.collection),
          fromTokenId: u.fromTokenId,
          toTokenId: u.toTokenId,
          blockNumber: u.blockNumber,
          transactionHash: u.transactionHash,
        },
        collection: u.collection,
        orderKey: `metadata:${u.collection}`,
      })),
    );
  });
  await collections.start();
  const chainBlocks = new ChainBlockRecorder(db, client.rpc, id, logger);
  chainBlocks.start();
  // Emits wallet.low_balance when a held wallet's balance falls below its lowBalance.
  const lowBalance = new LowBalanceWatcher(
    db,
    client,
    logger.child({ component: "low-balance" }),
    shared.lowBalancePollMs,
  );
  const runner = new JobRunner(
    jobStore,
    { engine, wallets, chain: client, logger: logger.child({ component: "jobs" }) },
    { ...DEFAULT_RUNNER_OPTIONS, concurrency: config.jobConcurrency },
  );
  return {
    id,
    chainId,
    name: chain.name,
    spec,
    provider,
    client,
    blocks,
    engine,
    collections,
    drops: {
      allowlists: new AllowlistStore(db, id),
      vouchers: new VoucherStore(db, id),
      maxGasPerTx: config.maxGasPerTx,
    },
    jobs: { runner, planner: new JobPlanner(client, config.maxGasPerTx) },
    metadata: openMetadata({
      db,
      chain: client,
      index: collections,
      blocks,
      publicUrl: shared.publicUrl,
      revealDelayBlocks: shared.config.revealDelayBlocks,
      ...shared.metadata,
    }),
    rpcUrls: chain.rpcUrls,
    urlCount: spec.rpcUrls.length,
    async start() {
      lowBalance.start();
      // Jobs left running by an earlier run (or another instance) go on with no request.
      await runner.start();
    },
    async stop() {
      // Batches not yet sent stay claimable in the store: the next start (or another process) sends them.
      await runner.stop();
      // What is unfinished stays in the store: the next start (or another process) follows it on.
      await engine.stop();
      await lowBalance.stop();
      await collections.stop();
      await chainBlocks.stop();
      await blocks.stop();
    },
  };
}
