import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { BlockFeed } from "../chain/block-feed";
import type { ChainClient } from "../chain/chain-client";
import type { SqlDriver } from "../db";
import type { Logger } from "../http/logger";
import type { SignerDirectory } from "../signers/signer";
import {
  DEFAULT_ENGINE_TIMING,
  type EngineMetrics,
  type EngineOptions,
  type OperationKind,
  type ResendGuard,
  type SpendGuard,
} from "./context";
import { MemoryNonceAllocator, SqlNonceAllocator } from "./nonce-allocator";
import { OperationStore } from "./operation-store";
import { TransactionEngine } from "./transaction-engine";

export interface OpenEngineOptions extends Omit<
  EngineOptions,
  "blockPollMs" | "scanMs" | "leaseMs" | "finalityBlocks"
> {
  finalityBlocks?: number;
  blockPollMs?: number;
  scanMs?: number;
  leaseMs?: number;
}

/**
 * The engine on the service's database. On PGlite (one process owns the data directory) nonces
 * live in memory and every lease left by an earlier run is taken back at once; on PostgreSQL
 * nonces are allocated in the database, so any number of processes can sign with one key.
 */
export async function openEngine(deps: {
  chain: ChainClient;
  db: SqlDriver;
  kinds: Map<string, OperationKind>;
  logger: Logger;
  options: OpenEngineOptions;
  metrics?: EngineMetrics;
  /** Who signs without a request (the follower's re-signs); the request keys still in memory when unset. */
  signers?: SignerDirectory;
  /** Spend limits of the signers (the held wallets' daily limits); none when unset. */
  spendGuard?: SpendGuard;
  /** Asked before the follower sends an operation again; none when unset. */
  resendGuard?: ResendGuard;
  /** The process's block feed, shared with the collection index; one of the engine's own when unset. */
  blocks?: BlockFeed;
}): Promise<TransactionEngine> {
  const store = new OperationStore(deps.db);
  const chainId = deps.options.chainId.toString();
  if (deps.db.backend === "pglite") await store.releaseAllLeases(chainId);
  const options = { ...DEFAULT_ENGINE_TIMING, ...deps.options };
  const engine = new TransactionEngine({
    chain: deps.chain,
    blocks: deps.blocks ?? new BlockFeed(deps.chain.rpc, { pollMs: options.blockPollMs }),
    store,
    nonces: deps.db.backend === "pglite" ? new MemoryNonceAllocator() : new SqlNonceAllocator(deps.db, chainId),
    signers: deps.signers ?? deps.chain.signers,
    spendGuard: deps.spendGuard,
    resendGuard: deps.resendGuard,
    kinds: deps.kinds,
    options,
    logger: deps.logger.child({ component: "engine" }),
    owner: `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`,
    metrics: deps.metrics,
  });
  engine.start();
  return engine;
}
