import { isError } from "ethers";
import type { BlockFeed, BlockHeader, Subscription } from "../chain/block-feed";
import { bloomMayHold } from "../chain/log-bloom";
import type { ChainLog } from "../chain/own-blocks";
import type { Rpc } from "../chain/rpc";
import type { Logger } from "../http/logger";
import { collectionMetadata, deploymentBlock } from "./deployment";
import type { DropLog } from "./drop-events";
import type { EditionTransferLog } from "./edition-events";
import type { MetadataUpdateLog, MetadataUpdatesFinalHook } from "./metadata-events";
import { LogRangeSizer, RangeRefused, collectionLogs, rangeLogsOf, type RangeLogs } from "./log-ranges";
import {
  ReorgDetected,
  type CollectionStandard,
  type CollectionStore,
  type TransferLog,
  type TransfersFinalHook,
} from "./store";

/**
 * Blocks below the head read with their hashes, linked to the stored ones, so that a reorg there is
 * noticed and undone. Ranges further down (a backfill) are read by logs alone.
 */
export const LIVE_WINDOW = 64;
/** Collections leased per scan at most. */
const MAX_LEASED = 10_000;
/** How long after a failed ERC-165 read a collection's standard is asked again. */
const STANDARD_RETRY_MS = 60_000;
/**
 * Live passes start at most this often. A chain with block time gives one pass a block; an
 * automining one, a block a write: there a pass per block cost each write about ten statements
 * of the store, and now several blocks share one (unless someone waits for the index: hurry()).
 */
export const LIVE_PASS_GAP_MS = 200;

export interface IndexerOptions {
  chainId: bigint;
  /** CONFIRMATIONS: a transfer this many blocks deep (its own block counting) is final. */
  confirmations: number;
  /** How long a lease on a collection lasts without renewal. */
  leaseMs: number;
  /** How often leases are taken and renewed. */
  scanMs: number;
  /** This process's name on leases. */
  owner: string;
  /** ERC-721 or ERC-1155, read once by ERC-165 (ChainClient.standardOf) and kept with the collection. */
  standardOf?: (address: string) => Promise<CollectionStandard>;
}

interface Followed {
  id: number;
  address: string;
  deployedBlock: number | null;
  indexedBlock: number | null;
  /** A pass (live or backfill) is moving it now. */
  busy: boolean;
  standard: CollectionStandard | null;
  /** When the standard, not read yet because the chain failed, is asked again. */
  standardRetryAt?: number;
}

/** One block range read for some collections, ready to apply. */
interface ReadRange {
  from: number;
  to: number;
  members: Array<{ id: number; indexedBlock: number }>;
  logs: TransferLog[];
  editions: EditionTransferLog[];
  drops: DropLog[];
  metadata: MetadataUpdateLog[];
  blocks?: BlockHeader[];
}

/** An ERC-4906 event just read (not yet final), for what keeps a collection's metadata in memory. */
export interface MetadataUpdateRead {
  /** Lower-case. */
  address: string;
  fromTokenId: string;
  toTokenId: string;
  blockNumber: number;
}

/**
 * Keeps the index of the collections this process holds leases on: a backfill from each one's
 * deployment block in eth_getLogs ranges that adapt to what the node accepts (the next range is
 * fetched while the last one is written), then, within LIVE_WINDOW of the head, once per new block
 * of the shared block feed, one eth_getLogs for all of them. Blocks read near the head are checked
 * against the stored hashes: a change rolls every collection back to the fork and reads again.
 */
export class CollectionIndexer {
  private readonly followed = new Map<number, Followed>();
  private readonly sizer = new LogRangeSizer();
  private readonly progress = new Set<(ids: number[]) => void>();
  private readonly hooks: TransfersFinalHook[] = [];
  private readonly metadataHooks: MetadataUpdatesFinalHook[] = [];
  private readonly metadataListeners = new Set<(updates: MetadataUpdateRead[]) => void>();
  private subscription?: Subscription;
  private scanTimer?: NodeJS.Timeout;
  private running = false;
  private backfilling?: Promise<void>;
  private livePass?: Promise<void>;
  private scanning?: Promise<void>;
  private resolvingStandards?: Promise<void>;
  private warned = new Set<string>();
  /** Each ends a wait between two live passes early (hurry, stop). */
  private readonly gaps = new Set<() => void>();

  constructor(
    private readonly store: CollectionStore,
    private readonly rpc: Rpc,
    private readonly feed: BlockFeed,
    private readonly logger: Logger,
    private readonly options: IndexerOptions,
  ) {}

  get chainId(): string {
    return this.options.chainId.toString();
  }

  start(): void {
    this.running = true;
    void this.scan();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.hurry();
    clearTimeout(this.scanTimer);
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    await Promise.all(
      [this.scanning, this.backfilling, this.livePass, this.resolvingStandards].map((p) => p?.catch(() => {})),
    );
    await this.store.release(this.options.owner).catch(() => {});
  }

  /** Called after each change of some collections' index positions is committed. */
  onProgress(listener: (ids: number[]) => void): () => void {
    this.progress.add(listener);
    return () => this.progress.delete(listener);
  }

  addFinalHook(hook: TransfersFinalHook): void {
    this.hooks.push(hook);
  }

  addMetadataFinalHook(hook: MetadataUpdatesFinalHook): void {
    this.metadataHooks.push(hook);
  }

  /** Called after a range holding ERC-4906 events is committed (as they are read, before they are final). */
  onMetadataUpdates(listener: (updates: MetadataUpdateRead[]) => void): () => void {
    this.metadataListeners.add(listener);
    return () => this.metadataListeners.delete(listener);
  }

  /** Whether this process indexes collection `id` now (holds its lease). */
  follows(id: number): boolean {
    return this.followed.has(id);
  }

  /** Someone waits for the index to reach a block: the next live pass need not wait for LIVE_PASS_GAP_MS. */
  hurry(): void {
    for (const end of [...this.gaps]) end();
  }

  /** Takes the leases of new collections at once rather than at the next scan. */
  wake(): void {
    if (!this.running) return;
    clearTimeout(this.scanTimer);
    void this.scan();
  }

  private async scan(): Promise<void> {
    if (!this.running) return;
    if (this.scanning) return this.scanning;
    this.scanning = this.claimAndResolve()
      .catch((err) => this.warn("scan", "taking collection leases failed", err))
      .finally(() => {
        this.scanning = undefined;
        if (this.running) this.scanTimer = setTimeout(() => void this.scan(), this.options.scanMs);
      });
    return this.scanning;
  }

  private async claimAndResolve(): Promise<void> {
    const claimed = await this.store.claim(this.chainId, this.options.owner, this.options.leaseMs, MAX_LEASED);
    const held = new Set<number>();
    for (const record of claimed) {
      held.add(record.id);
      const known = this.followed.get(record.id);
      if (!known) {
        this.followed.set(record.id, {
          id: record.id,
          address: record.address,
          deployedBlock: record.deployedBlock,
          indexedBlock: record.indexedBlock,
          busy: false,
          standard: record.standard,
        });
      } else if (known.indexedBlock === null && record.indexedBlock !== null) {
        known.deployedBlock = record.deployedBlock;
        known.indexedBlock = record.indexedBlock;
      }
    }
    for (const id of [...this.followed.keys()]) if (!held.has(id)) this.followed.delete(id); // lease lost
    await this.resolveDeployments();
    this.startStandards();
    if (this.followed.size > 0 && !this.subscription && this.running) {
      this.subscription = this.feed.subscribe(({ head }) => this.onHead(head));
    } else if (this.followed.size === 0 && this.subscription) {
      this.subscription.unsubscribe();
      this.subscription = undefined;
    }
    this.startBackfill();
    this.catchUpToHead();
  }

  /**
   * A live pass now for collections just registered a few blocks below the known head: heads come
   * by subscription, and a chain that mines on demand may announce none for a long while.
   */
  private catchUpToHead(): void {
    const head = this.feed.head;
    if (head === undefined || !this.subscription) return;
    const behind = [...this.followed.values()].some(
      (c) => c.indexedBlock !== null && !c.busy && c.indexedBlock < head && head - c.indexedBlock <= LIVE_WINDOW,
    );
    if (behind) void this.onHead(head);
  }

  /** Finds where collections registered without a start block begin (and their name and symbol). */
  private async resolveDeployments(): Promise<void> {
    for (const c of this.followed.values()) {
      if (c.indexedBlock !== null || !this.running) continue;
      const head = await this.head();
      const start = c.deployedBlock ?? (await deploymentBlock(this.rpc, c.address, head));
      const { name, symbol } = await collectionMetadata(this.rpc, c.address).catch(() => ({
        name: null,
        symbol: null,
      }));
      await this.store.setDeployment(c.id, start, name, symbol);
      const record = await this.store.find(this.chainId, c.address);
      if (record) {
        c.deployedBlock = record.deployedBlock;
        c.indexedBlock = record.indexedBlock;
      }
      this.logger.info({ collection: c.address, deployedBlock: c.deployedBlock }, "indexing a collection");
    }
  }

  /**
   * Keeps each collection's standard with it, read once: the logs are read alike for both (their
   * topics differ), the answers are not. Beside the scan, not in it: thousands of collections
   * without one (a store from before migration 34) must not hold up the renewal of their leases.
   */
  private startStandards(): void {
    if (this.resolvingStandards || !this.options.standardOf) return;
    this.resolvingStandards = this.resolveStandards(this.options.standardOf)
      .catch((err) => this.warn("standard", "reading a collection's standard failed", err))
      .finally(() => (this.resolvingStandards = undefined));
  }

  private async resolveStandards(standardOf: (address: string) => Promise<CollectionStandard>): Promise<void> {
    for (const c of [...this.followed.values()]) {
      if (c.standard !== null || !this.running || (c.standardRetryAt ?? 0) > Date.now()) continue;
      try {
        c.standard = await standardOf(c.address);
      } catch (err) {
        // Not a collection any more (a dev chain reset), or the chain is down: asked again in a minute.
        c.standardRetryAt = Date.now() + STANDARD_RETRY_MS;
        this.warn("standard", "reading a collection's standard failed", err);
        continue;
      }
      await this.store.setStandard(c.id, c.standard);
    }
  }

  private async head(): Promise<number> {
    return this.feed.head ?? Number(BigInt(await this.rpc.call<string>("eth_blockNumber", [])));
  }

  // ---- live: once per new block, near the head ----------------------------------------------

  private async onHead(head: number): Promise<void> {
    if (!this.running) return;
    const started = performance.now();
    this.livePass = this.followHead(head).catch((err) => this.warn("live", "indexing the new blocks failed", err));
    await this.livePass;
    if (this.followed.size > 0) this.startBackfill();
    // The feed merges the heads that come meanwhile into the next pass.
    await this.gap(LIVE_PASS_GAP_MS - (performance.now() - started));
  }

  private async gap(ms: number): Promise<void> {
    if (ms <= 0 || !this.running) return;
    await new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(timer);
        this.gaps.delete(end);
        resolve();
      };
      const timer = setTimeout(end, ms);
      this.gaps.add(end);
    });
  }

  private async followHead(head: number): Promise<void> {
    if (await this.undoReorgAt(head)) return;
    const near = [...this.followed.values()].filter(
      (c) => c.indexedBlock !== null && !c.busy && c.indexedBlock < head && head - c.indexedBlock <= LIVE_WINDOW,
    );
    if (near.length === 0) return;
    for (const c of near) c.busy = true;
    try {
      let from = Math.min(...near.map((c) => c.indexedBlock!)) + 1;
      while (from <= head && this.running) {
        const range = await this.readRange(near, from, head, from);
        if (!range) return; // blocks that do not link: a reorg is under way; the next block sorts it out
        if (!(await this.applyRange(range, head))) return;
        from = range.to + 1;
      }
    } finally {
      for (const c of near) c.busy = false;
    }
  }

  /**
   * Compares the newest stored block hash at or below `head` with the chain's; when they differ,
   * finds the fork (the newest block both agree on) and rolls the whole index back to it.
   */
  private async undoReorgAt(head: number): Promise<boolean> {
    const stored = await this.store.blockHashes(this.chainId, Math.max(0, head - LIVE_WINDOW), head);
    if (stored.size === 0) return false;
    const top = Math.max(...stored.keys());
    const [canonical] = (await this.feed.blocks(top, top)) ?? [];
    if (!canonical || canonical.hash === stored.get(top)) return false;
    await this.rollBack(head);
    return true;
  }

  private async rollBack(head: number): Promise<void> {
    const low = Math.max(0, head - LIVE_WINDOW);
    const stored = await this.store.blockHashes(this.chainId, low, head);
    const chain = (await this.feed.blocks(low, head)) ?? [];
    const canonical = new Map(chain.map((b) => [b.number, b.hash]));
    let fork = low - 1;
    for (const n of [...stored.keys()].sort((a, b) => b - a)) {
      if (canonical.get(n) === stored.get(n)) {
        fork = n;
        break;
      }
    }
    if (fork < low)
      this.logger.warn({ head, low }, "reorg deeper than the blocks the index keeps: rolled back to them");
    const { removed } = await this.store.rollback(this.chainId, fork);
    for (const c of this.followed.values()) if (c.indexedBlock !== null && c.indexedBlock > fork) c.indexedBlock = fork;
    this.logger.warn({ fork, head, tokensAffected: removed }, "reorg: index rolled back to the fork");
    this.notify([...this.followed.keys()]);
  }

  // ---- backfill: far below the head, range after range ----------------------------------------

  private startBackfill(): void {
    if (this.backfilling || !this.running) return;
    this.backfilling = this.backfill()
      .catch((err) => this.warn("backfill", "backfill paused; it resumes at the next scan", err))
      .finally(() => (this.backfilling = undefined));
  }

  private async backfill(): Promise<void> {
    while (this.running) {
      const started = [...this.followed.values()].filter((c) => c.indexedBlock !== null && !c.busy);
      if (started.length === 0) return;
      const head = await this.head();
      const behind = started.filter((c) => c.indexedBlock! < head - LIVE_WINDOW);
      if (behind.length === 0) return;
      for (const c of behind) c.busy = true;
      try {
        // On to the head: the ranges within LIVE_WINDOW of it with their blocks, still one ahead of the writes.
        await this.backfillTo(behind, head);
      } finally {
        for (const c of behind) c.busy = false;
      }
    }
  }

  /** Ranges from the lowest position up to `target`, the next one read while the last is written. */
  private async backfillTo(collections: Followed[], target: number): Promise<void> {
    const planned = new Map(collections.map((c) => [c.id, c.indexedBlock!]));
    const read = (from: number) => {
      const range = this.readRange(collections, from, target, target - LIVE_WINDOW + 1, planned);
      range.catch(() => {}); // awaited below; a prefetch abandoned after a failed write must not go unhandled
      return range;
    };
    let next: Promise<ReadRange | null> | undefined = read(Math.min(...planned.values()) + 1);
    while (next && this.running) {
      const range: ReadRange | null = await next;
      if (!range) return;
      next = range.to < target ? read(range.to + 1) : undefined;
      // Let the next request leave before the write: PGlite's work holds the event loop while it runs.
      await new Promise((resolve) => setImmediate(resolve));
      if (!(await this.applyRange(range, await this.head()))) return;
    }
  }

  // ---- reading and writing one range ----------------------------------------------------------

  /**
   * Reads the Transfer logs and drop events of every collection in `collections` whose position is
   * below the range's end, from `from` to at most `to` (as far as the node accepts): one
   * eth_getLogs for all of them. A range from `windowFrom` on comes with its blocks, and the logs
   * are checked against them (a range does not straddle `windowFrom`). `planned` holds the positions the collections will have
   * once the ranges read before are written.
   */
  private async readRange(
    collections: Followed[],
    from: number,
    to: number,
    windowFrom: number,
    planned?: Map<number, number>,
  ): Promise<ReadRange | null> {
    const positionOf = (c: Followed) => planned?.get(c.id) ?? c.indexedBlock!;
    const withBlocks = from >= windowFrom;
    for (;;) {
      const span = this.sizer.span;
      let end = Math.min(to, from + span - 1);
      if (!withBlocks && end >= windowFrom) end = windowFrom - 1;
      const members = collections.filter((c) => positionOf(c) < end);
      const addresses = new Map(members.map((c) => [c.address, c.id]));
      // Near the head the blocks are known first: when no block's log bloom may hold a log of any
      // member (most blocks of a busy chain hold none of a shop's), nothing is asked of the node.
      const known = withBlocks ? await this.feed.blocks(from, end) : undefined;
      if (known === null) return null;
      let read: RangeLogs;
      try {
        const proven = known && (await this.provenLogs(known, members));
        read = proven
          ? rangeLogsOf(proven, addresses)
          : known && noneMayHold(known, members)
            ? NO_LOGS
            : await collectionLogs(this.rpc, addresses, from, end);
      } catch (err) {
        if (!(err instanceof RangeRefused) && !isError(err, "TIMEOUT")) throw err;
        if (end - from + 1 <= 1) throw err;
        this.sizer.refused(end - from + 1, err instanceof RangeRefused ? err.message : "");
        this.logger.debug({ from, to: end, next: this.sizer.span }, "eth_getLogs range refused: smaller ranges");
        continue;
      }
      this.sizer.succeeded(
        end - from + 1,
        read.transfers.length + read.editions.length + read.drops.length + read.metadata.length,
      );
      const position = new Map(members.map((c) => [c.id, positionOf(c)]));
      const unread = (log: { collectionId: number; blockNumber: number }) =>
        log.blockNumber > position.get(log.collectionId)!;
      const range: ReadRange = {
        from,
        to: end,
        members: members.map((c) => ({ id: c.id, indexedBlock: position.get(c.id)! })),
        logs: read.transfers.filter(unread),
        editions: read.editions.filter(unread),
        drops: read.drops.filter(unread),
        metadata: read.metadata.filter(unread),
      };
      if (known) {
        const blocks = known;
        const linked = (log: { blockNumber: number; blockHash: string }) =>
          blocks[log.blockNumber - from]?.hash === log.blockHash;
        const all = [range.logs, range.editions, range.drops, range.metadata] as Array<
          Array<Parameters<typeof linked>[0]>
        >;
        if (!all.every((logs) => logs.every(linked))) return null;
        range.blocks = blocks;
      }
      for (const c of members) planned?.set(c.id, end);
      return range;
    }
  }

  /**
   * Every log of `blocks` that may hold a log of `members`, when each of those is proven to hold
   * only the engine's transactions (OwnBlocks: the follower has their receipts): the eth_getLogs of
   * a block of our own mints, answered without a call. Undefined when any of them is not.
   */
  private async provenLogs(blocks: BlockHeader[], members: Followed[]): Promise<ChainLog[] | undefined> {
    const logs: ChainLog[] = [];
    let any = false;
    for (const block of blocks) {
      if (block.logsBloom === undefined) return undefined;
      const bloom = block.logsBloom;
      if (!members.some((c) => bloomMayHold(bloom, c.address))) continue;
      const own = await this.feed.own.logsOf(block);
      if (!own) return undefined;
      logs.push(...own);
      any = true;
    }
    return any ? logs : undefined;
  }

  /** Writes a range; false when some collection was not where expected (its position is read again). */
  private async applyRange(range: ReadRange, head: number): Promise<boolean> {
    if (range.members.length === 0) return true;
    let result;
    try {
      result = await this.store.apply({
        chainId: this.chainId,
        owner: this.options.owner,
        collections: range.members,
        to: range.to,
        blocks: range.blocks,
        logs: range.logs,
        editions: range.editions,
        drops: range.drops,
        metadata: range.metadata,
        metadataHooks: this.metadataHooks,
        finalTo: Math.min(range.to, head - this.options.confirmations + 1),
        hooks: this.hooks,
      });
    } catch (err) {
      if (!(err instanceof ReorgDetected)) throw err;
      await this.rollBack(Math.max(head, err.blockNumber));
      return false;
    }
    for (const id of result.applied) {
      const c = this.followed.get(id);
      if (c) c.indexedBlock = range.to;
    }
    for (const stale of result.stale) {
      const c = this.followed.get(stale.id);
      if (!c) continue;
      if (!stale.leased) this.followed.delete(stale.id);
      else c.indexedBlock = stale.indexedBlock;
    }
    if (result.applied.length > 0) this.notify(result.applied);
    this.notifyMetadata(range, new Set(result.applied));
    return result.stale.length === 0;
  }

  private notifyMetadata(range: ReadRange, applied: Set<number>): void {
    if (range.metadata.length === 0 || this.metadataListeners.size === 0) return;
    const updates = range.metadata
      .filter((log) => applied.has(log.collectionId))
      .map((log) => ({
        address: this.followed.get(log.collectionId)?.address ?? "",
        fromTokenId: log.fromTokenId,
        toTokenId: log.toTokenId,
        blockNumber: log.blockNumber,
      }))
      .filter((update) => update.address !== "");
    if (updates.length === 0) return;
    for (const listener of this.metadataListeners) listener(updates);
  }

  private notify(ids: number[]): void {
    for (const listener of this.progress) listener(ids);
  }

  /** Logs a failure once until the same kind of work succeeds again (a chain outage is one line, not one a block). */
  private warn(kind: string, message: string, err: unknown): void {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    setTimeout(() => this.warned.delete(kind), 60_000).unref();
    this.logger.warn({ err: describe(err) }, message);
  }
}

/** An error's kind and message, never its parameters (a database error can carry them). */
function describe(err: unknown): { name?: string; message?: string } {
  return err instanceof Error ? { name: err.name, message: err.message.slice(0, 300) } : {};
}

const NO_LOGS: RangeLogs = { transfers: [], editions: [], drops: [], metadata: [] };

/** Whether every block has a log bloom and none of them may hold a log of any of `members`. */
function noneMayHold(blocks: BlockHeader[], members: Array<{ address: string }>): boolean {
  return blocks.every(
    (block) => block.logsBloom !== undefined && members.every((c) => !bloomMayHold(block.logsBloom!, c.address)),
  );
}
