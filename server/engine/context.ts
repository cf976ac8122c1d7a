import type { BlockFeed } from "../chain/block-feed";
import type { ChainClient } from "../chain/chain-client";
import type { Receipt } from "../chain/receipt";
import type { Logger } from "../http/logger";
import type { SignerDirectory, TransactionSigner } from "../signers/signer";
import type { NonceAllocator } from "./nonce-allocator";
import type { Operation } from "./operation";
import type { OperationStore } from "./operation-store";

/** How the engine reads the answer of each kind of operation once its receipt is in. */
export interface OperationKind {
  /** Status of the success answer (201 for a deployment). */
  successStatus: number;
  /** The route's own success fields, from the receipt and what the request knew. */
  result(receipt: Receipt, op: Operation): Record<string, unknown>;
}

export interface EngineOptions {
  chainId: bigint;
  /** Blocks deep a receipt must be (CONFIRMATIONS). */
  confirmations: number;
  /** How long a request waits for its confirmation before answering 202 (TX_TIMEOUT_MS). */
  txTimeoutMs: number;
  /** New blocks an unmined transaction waits before it is replaced with higher fees (TX_RESEND_BLOCKS). */
  resendBlocks: number;
  /** How often the chain head is polled while operations are in flight (the block feed's, when the engine makes it). */
  blockPollMs: number;
  /** How often the store is scanned for operations nobody follows (after a restart, a lost replica). */
  scanMs: number;
  /** How long a process's hold on an operation lasts without renewal. */
  leaseMs: number;
  /** Blocks deep an operation's block is taken as final where the node has no finalized block (FINALITY_BLOCKS). */
  finalityBlocks: number;
  /**
   * Tests only (CRASH_AT): the step of a write at which the process kills itself, as a crash would;
   * "resign-nonce-taken" is a re-sign (the request path's or the follower's) between its new nonce
   * and the store's record of it; "approved" is an approval whose decision is committed, its write
   * not yet broadcast.
   */
  crashAt?: "nonce-taken" | "row-stored" | "broadcast" | "resign-nonce-taken" | "approved";
  /** Tests only (CRASH_PAUSE_MS): stall this long at `crashAt`, once, instead of dying there. */
  crashPauseMs?: number;
}

export const DEFAULT_ENGINE_TIMING = { blockPollMs: 500, scanMs: 2_000, leaseMs: 30_000, finalityBlocks: 64 };

/** What the engine reports to GET /metrics. */
export interface EngineMetrics {
  operationStatus(status: string): void;
  nonceAllocated(count?: number): void;
  setSignerPoolSize(size: number): void;
}

/** Gives back a spend reservation whose write sent nothing. */
export type SpendRefund = () => Promise<void>;

/**
 * A policy on what a signer may spend (a wallet's daily spend limit), asked before a write's nonce
 * is taken and before it is signed. `reserve` throws the API error that refuses the write, or
 * answers how to give the reservation back if nothing is sent (undefined: nothing was reserved).
 */
export interface SpendGuard {
  reserve(signer: TransactionSigner, wei: bigint): Promise<SpendRefund | undefined>;
}

/**
 * A say, from outside the engine, over each broadcast of a transaction not yet on its way: a
 * request's first broadcast, and what the follower sends on its own once the request is over (one
 * the node never got, a crash before the broadcast; a re-signature). A job withdraws the operations
 * of a cancelled job this way, so that nothing of it is sent after the cancel. `sendAgain` runs `send` (one broadcast, no store access) and answers what it answers, or
 * answers "withdrawn" without running it; a guard holding a lock while `send` runs orders the
 * broadcast with the withdrawal.
 */
export interface ResendGuard {
  sendAgain<T>(op: Operation, send: () => Promise<T>): Promise<T | "withdrawn">;
}

/**
 * What the follower needs of the request path: which operations a request still holds (not the
 * follower's yet), and how new operations (nonce fills, re-signs) get their nonce and their row.
 */
export interface RequestPath {
  /** Whether a request still holds `id` before or in its first broadcast. */
  isBeingSent(id: string): boolean;
  /** Whether a request of this process is still working on `id`. */
  isInRequest(id: string): boolean;
  requestsInFlight(): Iterable<string>;
  /** The follower found a write's receipt before any new block (an automining chain). */
  receiptWasThereAtOnce(): void;
  /** Takes the next nonce of `from` for operation `id`, held for it (NonceHolders) until releaseNonce. */
  takeNonceFor(id: string, from: string): Promise<number>;
  /** Holds `nonce` of `from` for `id` until releaseNonce (a nonce fill). */
  holdNonce(id: string, from: string, nonce: number): void;
  releaseNonce(id: string): void;
  /** Every nonce of `from` held now (below `below`): by an unfinished row, or by a take not yet recorded. */
  heldNonces(from: string, below?: number): Promise<number[]>;
  /** Tests only: CRASH_AT's step (see EngineOptions.crashAt). */
  crashPoint(step: NonNullable<EngineOptions["crashAt"]>): Promise<void>;
  newOperation(
    request: { operation: string; signer: TransactionSigner; context: Record<string, unknown>; fingerprint: string },
    contractAddress: string | null,
  ): Operation;
  insert(op: Operation): Promise<void>;
}

/** What the request path and the follower share. */
export interface EngineContext {
  metrics?: EngineMetrics;
  chain: ChainClient;
  /** The process's head poll and block reads, shared with whatever else follows the chain. */
  blocks: BlockFeed;
  store: OperationStore;
  nonces: NonceAllocator;
  /** Who can sign for an address without a request: the follower's re-signs and nonce fills. */
  signers: SignerDirectory;
  /** Spend limits checked before a new write is signed (the follower's re-signs are not counted again). */
  spendGuard?: SpendGuard;
  /** Asked before an operation's first broadcast and before the follower sends one again (a cancelled job's are withdrawn); none: always sent. */
  resendGuard?: ResendGuard;
  kinds: Map<string, OperationKind>;
  options: EngineOptions;
  logger: Logger;
  /** This process's name on leases. */
  owner: string;
}
