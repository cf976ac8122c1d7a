import { toQuantity } from "ethers";
import { ARRIVALS_KEPT, nextPollDelay, steadyInterval } from "./block-timing";
import type { AnnouncedHead, HeadSource } from "./head-subscription";
import { OwnBlocks } from "./own-blocks";
import type { Rpc } from "./rpc";
import type { BlockRef, HeadWitness } from "./settled-views";

/** A block as the feed knows it: enough to link blocks, find our transactions and skip blocks without our logs. */
export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /**
   * Hashes of the block's transactions, lower-case, when the block was read
   * (`eth_getBlockByNumber(n, false)`); unset for a block a head subscription announced, which
   * has none (see Follower: it reads them only when that is cheaper than asking for receipts).
   */
  transactions?: string[];
  /** The block's log bloom (0x + 512 hex digits), where the node gave it. */
  logsBloom?: string;
  /** The root of the block's transactions trie, where the node gave it (own-blocks.ts). */
  transactionsRoot?: string;
  /** Seconds. */
  timestamp?: number;
  /** EIP-1559's base fee of the block, where the chain has one. */
  baseFeePerGas?: bigint;
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
  /**
   * How often the head is polled while anyone subscribes (BLOCK_POLL_MS), on a chain whose blocks
   * come at no steady pace; at a steady one, polls are timed to the next block (block-timing.ts).
   */
  pollMs: number;
  /** What announces new heads (a WebSocket subscription, the embedded chain): then polls only check it. */
  heads?: HeadSource;
  /** How often the head is polled while `heads` announces them: the truth a subscription is checked against. */
  checkPollMs?: number;
  /** Told, for each new block, how many seconds after its timestamp the feed knew it (block_seen_lag_seconds). */
  onSeen?: (lagSeconds: number) => void;
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
/** How often the head is polled while a subscription announces nothing (a quiet chain, or a silent socket). */
const DEFAULT_CHECK_POLL_MS = 15_000;
/** A poll that finds a head the subscription did not announce this long after the last one: it has gone silent. */
const SILENT_AFTER_MS = 3_000;
/** How long a polled head is taken as the head for the base fee of a quote. */
const FRESH_HEAD_MS = 5_000;

/**
 * One head feed for the whole process. Where the chain announces heads (`heads`: `eth_subscribe`
 * `newHeads`, or the embedded chain), a head that links to the last one is handed on at once with
 * no call at all, and the head is polled only every `checkPollMs` as the truth: a head the
 * subscription did not announce, or one that does not link (a gap, a reorg), is read as a poll
 * reads it, and a subscription found silent is started again. Elsewhere (or while it reconnects)
 * it asks `eth_blockNumber` timed to the chain's pace (block-timing.ts), reads each new block once
 * (`eth_getBlockByNumber`, in one batch), links it to the blocks it kept (a parent hash that does
 * not match is a reorg: it reads back to the fork), and hands the same blocks to every subscriber.
 * A slow subscriber never holds the others or the feed back: what it has not taken yet is merged
 * into its next event.
 */
export class BlockFeed implements HeadWitness {
  private readonly subscribers = new Set<Subscriber>();
  /** Recent canonical blocks by number, as last read. */
  private readonly recent = new Map<number, BlockHeader>();
  private lastHead?: number;
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private pokeAgain = false;
  private stopped = false;
  /** When the last few new heads arrived (ms), one block apart: the chain's pace. */
  private arrivals: number[] = [];
  /** The last head the subscription announced, and when. */
  private announcedAt?: { number: number; hash: string; at: number };
  /** An announcement that came while a poll was under way: taken up after it. */
  private announcedDuringPoll?: AnnouncedHead;
  private headsStarted = false;
  /** When a poll or an announcement last told the head (ms). */
  private toldAt = 0;
  private readonly maxBlocksPerPoll: number;
  private readonly keep: number;
  /** Kept blocks proven to hold only the engine's transactions, with their logs: the follower proves, the index reads. */
  readonly own = new OwnBlocks((number) => this.recent.get(number));

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

  /**
   * The base fee of the head, while the feed follows it (a subscription, or a poll within the last
   * 5 s): what a fee quote needs, for free. Undefined otherwise, or on a chain without one.
   */
  baseFee(): bigint | undefined {
    return this.follows() ? this.recent.get(this.lastHead!)?.baseFeePerGas : undefined;
  }

  /**
   * The head, while the feed follows it: what SettledViews keeps answers against, and what the
   * base fee is read from.
   */
  followedHead(): BlockRef | undefined {
    const block = this.follows() ? this.recent.get(this.lastHead!) : undefined;
    return block && { number: block.number, hash: block.hash };
  }

  /**
   * Whether the last head is the chain's: a live subscription whose last announced head the feed
   * has read (a gap it could not read, with nobody subscribed, leaves it behind), or a poll within
   * the last 5 s for a subscriber.
   */
  private follows(): boolean {
    if (this.lastHead === undefined) return false;
    if (this.subscribed) {
      const announced = this.announcedAt;
      return announced === undefined || this.recent.get(announced.number)?.hash === announced.hash;
    }
    return this.subscribers.size > 0 && Date.now() - this.toldAt <= FRESH_HEAD_MS;
  }

  /** The kept headers after `from` up to the followed head, linked to `from`; undefined when any is missing or `from` left the chain. */
  headersSince(from: BlockRef): BlockHeader[] | undefined {
    const head = this.followedHead();
    if (!head || head.number < from.number || head.number - from.number > this.keep) return undefined;
    if (this.recent.get(from.number)?.hash !== from.hash) return undefined;
    const headers: BlockHeader[] = [];
    for (let n = from.number + 1, parent = from.hash; n <= head.number; n++) {
      const block = this.recent.get(n);
      if (!block || block.parentHash !== parent) return undefined;
      headers.push(block);
      parent = block.hash;
    }
    return headers;
  }

  /** Whether a head subscription announces the chain's heads now. */
  get subscribed(): boolean {
    return this.options.heads?.live === true;
  }

  subscribe(listener: HeadListener): Subscription {
    const subscriber: Subscriber = { listener, busy: false, active: true };
    this.subscribers.add(subscriber);
    if (this.options.heads && !this.headsStarted && !this.stopped) {
      this.headsStarted = true;
      this.options.heads.start(
        (head) => this.announced(head),
        () => this.replan(),
      );
    }
    this.poke();
    return {
      unsubscribe: () => {
        subscriber.active = false;
        this.subscribers.delete(subscriber);
        if (this.subscribers.size === 0) clearTimeout(this.timer);
      },
    };
  }

  /**
   * Polls now rather than at the next tick (a write was just sent, a reader waits for a block):
   * nothing to do while a subscription announces every head, once the feed has one.
   */
  poke(): void {
    if (this.subscribed && this.lastHead !== undefined) return;
    this.pollNow();
  }

  private pollNow(): void {
    if (this.stopped || this.subscribers.size === 0) return;
    if (this.polling) {
      this.pokeAgain = true;
      return;
    }
    this.startPoll();
  }

  /** One poll now (`knownHead` when an announcement told it); then what waited for it, or the next one planned. */
  private startPoll(knownHead?: number): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.polling = this.poll(knownHead).finally(() => {
      this.polling = undefined;
      const announced = this.announcedDuringPoll;
      this.announcedDuringPoll = undefined;
      if (this.pokeAgain) {
        this.pokeAgain = false;
        this.pollNow();
      } else if (announced) this.announced(announced);
      else this.schedule();
    });
  }

  /**
   * A head the subscription announced. One that links to the last head is handed on as it is (no
   * call); one already known is dropped; any other (a gap, another branch) is read as a poll reads it.
   */
  private announced(head: AnnouncedHead): void {
    if (this.stopped) return;
    this.announcedAt = { number: head.number, hash: head.hash, at: Date.now() };
    if (this.polling) {
      this.announcedDuringPoll = head;
      return;
    }
    const last = this.lastHead;
    if (last !== undefined && head.number <= last && this.recent.get(head.number)?.hash === head.hash) return;
    const parent = this.recent.get(head.number - 1);
    if (last !== undefined && head.number === last + 1 && parent?.hash === head.parentHash) {
      const block: BlockHeader = { ...head };
      this.remember([block]);
      this.newHead(head.number, [block]);
      for (const subscriber of this.subscribers)
        this.deliver(subscriber, { head: head.number, blocks: [block], complete: true });
      this.schedule();
      return;
    }
    // Another branch at or below the last head: read again from there, back to the fork.
    if (last !== undefined && head.number <= last) this.lastHead = head.number - 1;
    this.startPoll(head.number);
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

  /**
   * The blocks at `numbers` read with their transaction hashes (one batch), replacing the kept
   * headers a subscription announced without them; null when a block could not be read or is no
   * longer the one kept at its height (a reorg under way).
   */
  async withTransactions(numbers: number[]): Promise<BlockHeader[] | null> {
    const read = await this.read(numbers);
    if (!read) return null;
    for (const block of read) {
      const kept = this.recent.get(block.number);
      if (kept && kept.hash !== block.hash) return null;
      if (kept) this.recent.set(block.number, { ...kept, transactions: block.transactions });
    }
    return read;
  }

  /** Stops polling (and the head subscription) for good. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.options.heads?.stop();
    await this.polling?.catch(() => {});
  }

  /** The next poll: a check while a subscription announces heads, else timed to the chain's pace. */
  private schedule(): void {
    if (this.stopped || this.subscribers.size === 0) return;
    clearTimeout(this.timer);
    const delay = this.subscribed ? this.silenceAfter() : nextPollDelay(this.arrivals, Date.now(), this.options.pollMs);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pollNow();
    }, delay);
  }

  /**
   * How long a subscription may announce nothing before a poll checks the head: three blocks of a
   * steady chain (at least SILENT_AFTER_MS), else `checkPollMs`. Each announcement puts it off, so
   * a healthy subscription on a busy chain costs no poll at all.
   */
  private silenceAfter(): number {
    const interval = steadyInterval(this.arrivals);
    const check = this.options.checkPollMs ?? DEFAULT_CHECK_POLL_MS;
    return interval === undefined ? check : Math.min(check, Math.max(SILENT_AFTER_MS, 3 * interval));
  }

  /** The chain's steady block interval (ms), when the feed has seen one. */
  get interval(): number | undefined {
    return steadyInterval(this.arrivals);
  }

  /**
   * A poll; `knownHead` when an announcement already told the head. Otherwise the head block
   * itself is asked (eth_getBlockByNumber "latest"): one call tells the head and reads the header a
   * new block needs, where eth_blockNumber and then the header took two a block.
   */
  private async poll(knownHead?: number): Promise<void> {
    let head: number;
    let latest: BlockHeader | undefined;
    if (knownHead !== undefined) head = knownHead;
    else {
      try {
        const read = this.rpc.call<unknown>("eth_getBlockByNumber", ["latest", false]).then((json) => {
          latest = toHeader(json) ?? undefined;
          if (!latest) throw new Error("no head block in the answer");
          return latest.number;
        });
        head = await (this.options.liveness?.watch(read) ?? read);
      } catch {
        return; // the chain is away: try again at the next poll
      }
      this.checkSubscription(head);
    }
    let blocks: BlockHeader[] = [];
    let complete = true;
    try {
      ({ blocks, complete } = await this.newBlocks(head, latest));
    } catch {
      complete = false; // blocks could not be read: subscribers look up what they need themselves
    }
    this.newHead(head, blocks);
    for (const subscriber of this.subscribers) this.deliver(subscriber, { head, blocks, complete });
  }

  /** Records a head: the pace of the chain, how late the feed knew the new blocks. */
  private newHead(head: number, blocks: BlockHeader[]): void {
    this.toldAt = Date.now();
    const last = this.lastHead;
    this.lastHead = head;
    if (last === undefined || head <= last) return;
    const now = Date.now();
    // Only heads one block apart tell the pace: a jump (a missed block, a restart) starts it again.
    if (head === last + 1) this.arrivals = [...this.arrivals, now].slice(-ARRIVALS_KEPT);
    else this.arrivals = [now];
    for (const block of blocks) {
      if (block.number > last && block.timestamp !== undefined) this.options.onSeen?.(now / 1000 - block.timestamp);
    }
  }

  /**
   * A poll found `head` while a subscription is said to announce heads: one it never announced,
   * long after its last announcement, means a silent socket. It is started again; meanwhile the
   * feed polls at the chain's pace.
   */
  private checkSubscription(head: number): void {
    const heads = this.options.heads;
    if (!heads?.live) return;
    const announced = this.announcedAt;
    if (announced && (head <= announced.number || Date.now() - announced.at < SILENT_AFTER_MS)) return;
    if (!announced && this.lastHead === undefined) return; // the first poll: nothing announced yet
    heads.stop();
    heads.start(
      (h) => this.announced(h),
      () => this.replan(),
    );
  }

  /** The subscription came up or went down: the next poll is planned again (a check, or at the chain's pace). */
  private replan(): void {
    if (this.polling) return; // planned when it ends
    clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule();
  }

  /**
   * Reads the blocks after the last head up to `head` (`latest`, when the poll read it already), and
   * back to the fork when they do not link.
   */
  private async newBlocks(head: number, latest?: BlockHeader): Promise<{ blocks: BlockHeader[]; complete: boolean }> {
    const last = this.lastHead;
    if (last === undefined) {
      const [block] = latest ? [latest] : ((await this.read([head])) ?? []);
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
    let blocks = latest
      ? await this.read(range(from, head - 1)).then((older) => older && [...older, latest])
      : await this.read(range(from, head));
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
    this.own.headersRead(blocks);
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
  const b = json as {
    number?: string;
    hash?: string;
    parentHash?: string;
    transactions?: unknown[];
    logsBloom?: unknown;
    transactionsRoot?: unknown;
    timestamp?: unknown;
    baseFeePerGas?: unknown;
  };
  if (!b.number || !b.hash || !b.parentHash) return null;
  return {
    number: Number(BigInt(b.number)),
    hash: b.hash.toLowerCase(),
    parentHash: b.parentHash.toLowerCase(),
    transactions: (b.transactions ?? []).map((tx) => String(tx).toLowerCase()),
    ...(typeof b.logsBloom === "string" ? { logsBloom: b.logsBloom.toLowerCase() } : {}),
    ...(typeof b.transactionsRoot === "string" ? { transactionsRoot: b.transactionsRoot.toLowerCase() } : {}),
    ...(typeof b.timestamp === "string" ? { timestamp: Number(BigInt(b.timestamp)) } : {}),
    ...(typeof b.baseFeePerGas === "string" ? { baseFeePerGas: BigInt(b.baseFeePerGas) } : {}),
  };
}
