import { randomBytes } from "node:crypto";
import { getAddress } from "ethers";
import { hostname } from "node:os";
import type { BlockFeed } from "../chain/block-feed";
import type { ChainClient } from "../chain/chain-client";
import type { SqlDriver } from "../db";
import { toChainApiError } from "../chain/chain-errors";
import { ApiError } from "../http/errors";
import type { Logger } from "../http/logger";
import { ChainWalletReader } from "./chain-wallet";
import { collectionMetadata } from "./deployment";
import { CollectionIndexer, LIVE_WINDOW } from "./indexer";
import type { MetadataUpdatesFinalHook } from "./metadata-events";
import {
  CollectionStore,
  type CollectionRecord,
  type CollectionStandard,
  type RegisteredBy,
  type TransfersFinalHook,
} from "./store";

export interface CollectionIndexOptions {
  chainId: bigint;
  confirmations: number;
  leaseMs?: number;
  scanMs?: number;
  /** How long /nft/total-supply waits for the index to reach the head before it reads the chain. */
  catchUpMs?: number;
  /** MAX_COLLECTIONS_PER_KEY: collections one access key may register through POST /collections. */
  maxCollectionsPerKey?: number;
}

/** How long `?minBlock=` waits for the index (API.md: up to 5 s). */
export const MIN_BLOCK_WAIT_MS = 5_000;
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_SCAN_MS = 2_000;
const DEFAULT_CATCH_UP_MS = 1_500;
export const DEFAULT_MAX_COLLECTIONS_PER_KEY = 1_000;

/**
 * The collections index as the rest of the service uses it: registering collections (once per
 * process per address, no chain call), waiting for the index to reach a block, and the wallet
 * /nft/total-supply answers. The indexer runs in every process; each collection is indexed by the
 * one holding its lease, and every process reads.
 */
export class CollectionIndex {
  readonly store: CollectionStore;
  readonly indexer: CollectionIndexer;
  private readonly wallets: ChainWalletReader;
  /** Collections known to be registered, by lower-case address: an /nft request costs no query after the first. */
  private readonly registered = new Map<string, number>();
  private readonly waiting = new Set<() => void>();
  /** Collections that answered neither name() nor symbol(), by id. */
  private readonly nameless = new Set<number>();

  constructor(
    db: SqlDriver,
    private readonly chain: ChainClient,
    private readonly feed: BlockFeed,
    private readonly logger: Logger,
    private readonly options: CollectionIndexOptions,
  ) {
    this.store = new CollectionStore(db);
    this.indexer = new CollectionIndexer(this.store, chain.rpc, feed, logger.child({ component: "index" }), {
      chainId: options.chainId,
      confirmations: options.confirmations,
      leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
      scanMs: options.scanMs ?? DEFAULT_SCAN_MS,
      owner: `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`,
      standardOf: (address) => chain.standardOf(getAddress(address)),
    });
    this.wallets = new ChainWalletReader(chain.rpc);
    this.indexer.onProgress(() => {
      for (const wake of [...this.waiting]) wake();
    });
  }

  get chainId(): string {
    return this.options.chainId.toString();
  }

  /** Starts indexing; on PGlite (one process owns the data) every lease left by an earlier run is taken back first. */
  async start(): Promise<void> {
    if (this.store.db.backend === "pglite") await this.store.releaseAll(this.chainId);
    this.indexer.start();
  }

  stop(): Promise<void> {
    return this.indexer.stop();
  }

  /**
   * Registers a collection (`address` checked to be an ERC-721 by the caller); `deployedBlock` is
   * where its logs start, looked up by the indexer when unset.
   */
  async register(
    address: string,
    by: RegisteredBy,
    deployedBlock?: number,
  ): Promise<{ record: CollectionRecord; created: boolean }> {
    const key = address.toLowerCase();
    const result = await this.store.register(this.chainId, key, by, deployedBlock);
    this.registered.set(key, result.record.id);
    if (result.created || deployedBlock !== undefined) this.indexer.wake();
    return result;
  }

  /**
   * Registers a collection for POST /collections by an access key (`keyId`, "root" for the API_KEY);
   * null when the key has registered MAX_COLLECTIONS_PER_KEY new ones already.
   */
  async registerByKey(
    address: string,
    keyId: string,
    deployedBlock?: number,
  ): Promise<{ record: CollectionRecord; created: boolean } | null> {
    const key = address.toLowerCase();
    const max = this.options.maxCollectionsPerKey ?? DEFAULT_MAX_COLLECTIONS_PER_KEY;
    const result = await this.store.registerByKey(this.chainId, key, keyId, max, deployedBlock);
    if (!result) return null;
    this.registered.set(key, result.record.id);
    if (result.created || deployedBlock !== undefined) this.indexer.wake();
    return result;
  }

  /**
   * Registers a collection an /nft request named, once per process: after the first time it costs
   * nothing, not even a query. Failures are logged, never the request's.
   */
  notice(address: string): void {
    if (this.registered.has(address.toLowerCase())) return;
    this.register(address, "request").catch((err: unknown) =>
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "registering a collection failed"),
    );
  }

  /**
   * `record` with its name and symbol: asked of the chain (and kept) while the index has neither. A
   * collection registered with its deployment block (deployed through the service, the embedded
   * chain's) is never looked up by the indexer. One that answers neither is asked once per process.
   */
  async withMetadata(record: CollectionRecord): Promise<CollectionRecord> {
    if (record.name !== null || record.symbol !== null || this.nameless.has(record.id)) return record;
    let metadata: { name: string | null; symbol: string | null };
    try {
      metadata = await collectionMetadata(this.chain.rpc, record.address);
    } catch {
      return record; // the chain does not answer now: asked again at the next read
    }
    if (metadata.name === null && metadata.symbol === null) {
      this.nameless.add(record.id);
      return record;
    }
    await this.store.setMetadata(record.id, metadata.name, metadata.symbol);
    return { ...record, ...metadata };
  }

  /**
   * `record`'s standard: the one kept with it, else read from the chain (once, by ERC-165) and kept.
   * Asked before a read's snapshot, never inside it: a chain call must not hold the store.
   */
  async standardOf(record: CollectionRecord): Promise<CollectionStandard> {
    if (record.standard !== null) return record.standard;
    let standard: CollectionStandard;
    try {
      standard = await this.chain.standardOf(getAddress(record.address));
    } catch (err) {
      // A chain that does not answer does not fail a read of the store: what the index holds tells, for now.
      if (!(err instanceof ApiError) || err.code !== "CHAIN_UNAVAILABLE") throw err;
      return (await this.store.holdsEditions(record.id)) ? "erc1155" : "erc721";
    }
    await this.store.setStandard(record.id, standard);
    return standard;
  }

  /** The collection at `address`, or null when the index does not follow it. */
  find(address: string): Promise<CollectionRecord | null> {
    return this.store.find(this.chainId, address.toLowerCase());
  }

  /**
   * The collection once its index reflects block `minBlock`, waiting up to `timeoutMs` (and asking
   * for the head at once, rather than at the next poll); 503 INDEX_BEHIND with Retry-After past it.
   */
  async atBlock(record: CollectionRecord, minBlock: number, timeoutMs = MIN_BLOCK_WAIT_MS): Promise<void> {
    if (record.indexedBlock !== null && record.indexedBlock >= minBlock) return;
    const reached = await this.waitFor(record.id, minBlock, timeoutMs);
    if (!reached) {
      const at = await this.store.indexedBlock(record.id);
      throw new ApiError(
        "INDEX_BEHIND",
        `The index of ${record.address} reflects block ${at ?? "none yet"}, not ${minBlock}; retry shortly`,
        undefined,
        { "Retry-After": "1" },
      );
    }
  }

  /** Whether collection `id`'s index reaches `block` within `timeoutMs`. */
  private async waitFor(id: number, block: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = await this.store.indexedBlock(id);
      if (at !== null && at >= block) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      this.feed.poke();
      this.indexer.hurry();
      // Woken by this process's indexer; another process's progress is seen by asking the store again.
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiting.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 100));
        this.waiting.add(wake);
      });
    }
  }

  /**
   * The token ids `owner` holds in the collection at `address`, for /nft/total-supply: from the
   * index once it has reached the chain's head as of now (waiting a moment for the last block),
   * else from the chain in pieces; for an ERC-721 whose wallets only the index can tell, from the
   * index once it is there (up to MIN_BLOCK_WAIT_MS, then 503 INDEX_BEHIND). `supply` comes with an
   * answer from the index: the tokens held by anyone, for a collection without totalSupply().
   */
  async walletOf(address: string, owner: string): Promise<{ tokenIds: string[]; supply?: bigint }> {
    const key = address.toLowerCase();
    const record = (await this.find(key)) ?? (await this.register(key, "request")).record;
    const head = await this.chain.rpc.call<string>("eth_blockNumber", []).then(
      (h) => Number(BigInt(h)),
      (err: unknown) => Promise.reject(toChainApiError(err)),
    );
    const near = record.indexedBlock !== null && head - record.indexedBlock <= LIVE_WINDOW;
    if (near && (await this.waitFor(record.id, head, this.options.catchUpMs ?? DEFAULT_CATCH_UP_MS))) {
      const answer = await this.fromIndex(record.id, key, owner, head);
      if (answer) return answer;
    }
    const tokenIds = await this.wallets.wallet(address, owner);
    if (tokenIds) return { tokenIds };
    await this.atBlock(record, head);
    const answer = await this.fromIndex(record.id, key, owner, head);
    if (!answer)
      throw new ApiError("INDEX_BEHIND", "The index was rolled back by a reorg; retry", undefined, {
        "Retry-After": "1",
      });
    return answer;
  }

  /** The wallet from the index, read with the collection's position; null if that is below `head` (a reorg meanwhile). */
  private fromIndex(id: number, address: string, owner: string, head: number) {
    return this.store.snapshot(async (db) => {
      const now = await this.store.find(this.chainId, address, db);
      if (!now || now.indexedBlock === null || now.indexedBlock < head) return null;
      return { tokenIds: await this.store.wallet(db, id, owner.toLowerCase()), supply: now.supply };
    });
  }

  /**
   * Registers `hook`, run inside the transaction that makes indexed transfers CONFIRMATIONS deep
   * (webhooks write their `collection.transfer` events there).
   */
  onTransfersFinal(hook: TransfersFinalHook): void {
    this.indexer.addFinalHook(hook);
  }

  /**
   * Registers `hook`, run inside the transaction that makes indexed ERC-4906 events CONFIRMATIONS
   * deep (webhooks write their `collection.metadata_updated` events there).
   */
  onMetadataUpdatesFinal(hook: MetadataUpdatesFinalHook): void {
    this.indexer.addMetadataFinalHook(hook);
  }
}
