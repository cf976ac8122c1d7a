import { toQuantity } from "ethers";
import type { Rpc } from "./rpc";

/** A block as the feed reads it (`eth_getBlockByNumber(n, false)`): enough to link blocks and find our transactions. */
export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** Hashes of the block's transactions, lower-case. */
  transactions: string[];
}

/**
 * What a subscriber is handed at each poll: the head, and the blocks read since it was last
 * handed any, oldest first. `blocks` is empty when the head has not moved; it starts below the
 * previous head after a reorg (the blocks of the new branch); it covers the whole way since the
 * subscriber's previous event unless `complete` is false (more new blocks than the feed reads at
 * once: the subscriber looks up what it needs itself).
 */
export interface HeadEvent {
  head: number;
  blocks: BlockHeader[];
  complete: boolean;
}

export type HeadListener = (event: HeadEvent) => Promise<void> | void;

export interface Subscription {
  /** Stops this subscriber's events; the feed stops polling when nobody subscribes. */
  unsubscribe(): void;
}

export interface BlockFeedOptions {
  /** How often the head is polled while anyone subscribes (BLOCK_POLL_MS). */
  pollMs: number;
  /** New blocks read at most per poll; past that only the newest are read (`complete: false`). */
  maxBlocksPerPoll?: number;
  /** Recent blocks kept, to link new ones to and to find where a reorg forked. */
  keep?: number;
  /** Told of every head poll, answered or failed: the chain's liveness, which the store's reads consult. */
  liveness?: { watch(question: Promise<number>): Promise<number> };
}

interface Subscriber {
  listener: HeadListener;
  /** The event not yet handed over (the subscriber is busy): later polls merge into it. */
  pending?: HeadEvent;
  busy: boolean;
  active: boolean;
}

const DEFAULT_MAX_BLOCKS_PER_POLL = 64;
const DEFAULT_KEEP = 256;

/**
 * One head poll for the whole process. While anyone subscribes, it asks `eth_blockNumber` every
 * `pollMs`, reads each new block once (`eth_getBlockByNumber`, in one batch), links it to the
 * blocks it kept (a parent hash that does not match is a reorg: it reads back to the fork), and
 * hands the same blocks to every subscriber. A slow subscriber never holds the others or the
 * poll back: what it has not taken yet is merged into its next event.
 */
export class BlockFeed {
  private readonly subscribers = new Set<Subscriber>();
  /** Recent canonical blocks by number, as last read. */
  private readonly recent = new Map<number, BlockHeader>();
  private lastHead?: number;
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private pokeAgain = false;
  private stopped = false;
  private readonly maxBlocksPerPoll: number;
  private readonly keep: number;

  constructor(
    private readonly rpc: Rpc,
    private readonly options: BlockFeedOptions,
  ) {
    this.maxBlocksPerPoll = options.maxBlocksPerPoll ?? DEFAULT_MAX_BLOCKS_PER_POLL;
    this.keep = options.keep ?? DEFAULT_KEEP;
  }

  /** The head of the last poll, if any. */
  get head(): number | undefined {
    return this.lastHead;
  }

  subscribe(listener: HeadListener): Subscription {
    const subscriber: Subscriber = { listener, busy: false, active: true };
    this.subscribers.add(subscriber);
    this.poke();
    return {
      unsubscribe: () => {
        subscriber.active = false;
        this.subscribers.delete(subscriber);
        if (this.subscribers.size === 0) clearTimeout(this.timer);
      },
    };
  }

  /** Polls now rather than at the next tick (a write just answered, a reader waits for a block). */
  poke(): void {
    if (this.stopped || this.subscribers.size === 0) return;
    if (this.polling) {
      this.pokeAgain = true;
      return;
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    this.polling = this.poll().finally(() => {
      this.polling = undefined;
      if (this.pokeAgain) {
        this.pokeAgain = false;
        this.poke();
      } else this.schedule();
    });
  }

  /** The kept block at `number`, if the feed read it and it is still on the chain it follows. */
  block(number: number): BlockHeader | undefined {
    return this.recent.get(number);
  }

  /**
   * The blocks `from`..`to`, linked parent to child: kept ones, the rest read in one batch. Null
   * when they do not link (a reorg is under way) or a block could not be read.
   */
  async blocks(from: number, to: number): Promise<BlockHeader[] | null> {
    if (to < from) return [];
    const missing: number[] = [];
    for (let n = from; n <= to; n++) if (!this.recent.has(n)) missing.push(n);
    const read = await this.read(missing);
    if (!read) return null;
    const byNumber = new Map(read.map((b) => [b.number, b]));
    const list: BlockHeader[] = [];
    for (let n = from; n <= to; n++) {
      const block = this.recent.get(n) ?? byNumber.get(n);
      if (!block) return null;
      if (list.length > 0 && block.parentHash !== list[list.length - 1].hash) return null;
      list.push(block);
    }
    return list;
  }

  /** Stops polling for good. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling?.catch(() => {});
  }

  private schedule(): void {
    if (this.stopped || this.subscribers.size === 0 || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.poke();
    }, this.options.pollMs);
  }

  private async poll(): Promise<void> {
    let head: number;
    try {
      const asked = this.rpc.call<string>("eth_blockNumber", []).then((answer) => Number(BigInt(answer)));
      head = await (this.options.liveness?.watch(asked) ?? asked);
    } catch {
      return; // the chain is away: try again at the next poll
    }
    let blocks: BlockHeader[] = [];
    let complete = true;
    try {
      ({ blocks, complete } = await this.newBlocks(head));
    } catch {
      complete = false; // blocks could not be read: subscribers look up what they need themselves
    }
    this.lastHead = head;
    for (const subscriber of this.subscribers) this.deliver(subscriber, { head, blocks, complete });
  }

  /** Reads the blocks after the last head up to `head`, and back to the fork when they do not link. */
  private async newBlocks(head: number): Promise<{ blocks: BlockHeader[]; complete: boolean }> {
    const last = this.lastHead;
    if (last === undefined) {
      const [block] = (await this.read([head])) ?? [];
      if (block) this.remember([block]);
      return { blocks: block ? [block] : [], complete: false };
    }
    if (head === last) return { blocks: [], complete: true };
    let from = Math.min(last + 1, head);
    let complete = true;
    if (head - from + 1 > this.maxBlocksPerPoll) {
      from = head - this.maxBlocksPerPoll + 1;
      complete = false;
    }
    let blocks = await this.read(range(from, head));
    if (!blocks) return { blocks: [], complete: false };
    // Walk back while the oldest new block does not link to what we kept: a reorg replaced it.
    while (blocks.length < this.keep) {
      const parent = this.recent.get(blocks[0].number - 1);
      if (!parent || parent.hash === blocks[0].parentHash) break;
      const older: BlockHeader | undefined = (await this.read([blocks[0].number - 1]))?.[0];
      if (!older) return { blocks: [], complete: false };
      blocks = [older, ...blocks];
    }
    for (const n of [...this.recent.keys()]) if (n > head) this.recent.delete(n); // a shorter branch won
    this.remember(blocks);
    return { blocks, complete };
  }

  private remember(blocks: BlockHeader[]): void {
    for (const block of blocks) this.recent.set(block.number, block);
    const newest = blocks[blocks.length - 1]?.number ?? 0;
    for (const n of this.recent.keys()) if (n <= newest - this.keep) this.recent.delete(n);
  }

  /** The blocks at `numbers`, in one batch; null if any could not be read. */
  private async read(numbers: number[]): Promise<BlockHeader[] | null> {
    if (numbers.length === 0) return [];
    const answers = await this.rpc.batch(numbers.map((n) => ["eth_getBlockByNumber", [toQuantity(n), false]]));
    const blocks: BlockHeader[] = [];
    for (const answer of answers) {
      const block = "result" in answer ? toHeader(answer.result) : null;
      if (!block) return null;
      blocks.push(block);
    }
    return blocks;
  }

  /** Hands `event` to `subscriber`, or merges it into what waits for it while it is busy. */
  private deliver(subscriber: Subscriber, event: HeadEvent): void {
    subscriber.pending = subscriber.pending ? merge(subscriber.pending, event) : event;
    if (subscriber.busy) return;
    void this.drain(subscriber);
  }

  private async drain(subscriber: Subscriber): Promise<void> {
    subscriber.busy = true;
    try {
      while (subscriber.pending && subscriber.active) {
        const event = subscriber.pending;
        subscriber.pending = undefined;
        try {
          await subscriber.listener(event);
        } catch {
          // a subscriber's failure is its own: it logs and tries again at its next event
        }
      }
    } finally {
      subscriber.busy = false;
    }
  }
}

/** Two events as one: the later head, and every block of both, the later read of a number winning. */
function merge(earlier: HeadEvent, later: HeadEvent): HeadEvent {
  const byNumber = new Map<number, BlockHeader>();
  for (const block of [...earlier.blocks, ...later.blocks]) byNumber.set(block.number, block);
  // Blocks above the later head are gone: a shorter branch won.
  for (const n of byNumber.keys()) if (n > later.head) byNumber.delete(n);
  const blocks = [...byNumber.values()].sort((a, b) => a.number - b.number);
  const contiguous = blocks.every((b, i) => i === 0 || b.number === blocks[i - 1].number + 1);
  return { head: later.head, blocks, complete: earlier.complete && later.complete && contiguous };
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function toHeader(json: unknown): BlockHeader | null {
  if (json === null || typeof json !== "object") return null;
  const b = json as { number?: string; hash?: string; parentHash?: string; transactions?: unknown[] };
  if (!b.number || !b.hash || !b.parentHash) return null;
  return {
    number: Number(BigInt(b.number)),
    hash: b.hash.toLowerCase(),
    parentHash: b.parentHash.toLowerCase(),
    transactions: (b.transactions ?? []).map((tx) => String(tx).toLowerCase()),
  };
}
