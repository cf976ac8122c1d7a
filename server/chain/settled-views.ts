import { bloomMayHold } from "./log-bloom";

/** A block by number and hash: where a kept answer was read. */
export interface BlockRef {
  number: number;
  hash: string;
}

/** What tells whether the chain may have changed a value since a block (BlockFeed implements it). */
export interface HeadWitness {
  /** The head followed now (a live subscription, or a recent poll); undefined when the feed does not follow. */
  followedHead(): BlockRef | undefined;
  /** The headers after `from` up to the head, if the feed keeps all of them linked to `from`; undefined otherwise. */
  headersSince(from: BlockRef): { logsBloom?: string }[] | undefined;
}

interface Kept {
  value: unknown;
  at: BlockRef;
  /** Told by an event of a block proven to hold only the engine's transactions, not read. */
  learned?: boolean;
  /** The newest block whose headers since `at` were found not to hold the event: each header is looked at once. */
  checked?: BlockRef;
}

const MAX_KEPT = 10_000;

/**
 * View answers kept while the chain's headers show they cannot have changed. A collection's price
 * is read once, then reused until a block whose logsBloom may hold the event that changes it
 * (both the contract's address and the event's topic), a reorg, or the feed losing the head. A
 * hosted RPC bills per call, and a price read per mint is a call the headers already answer.
 *
 * Only for contracts whose code emits that event (the caller checks): a HashLips-style contract
 * whose setCost emits nothing would otherwise be sent a stale price.
 */
export class SettledViews {
  private readonly kept = new Map<string, Kept>();
  private witness?: HeadWitness;

  /** From now on, answers are kept while `witness` follows the head. */
  followHeads(witness: HeadWitness): void {
    this.witness = witness;
  }

  /** `read()`'s answer, or the one kept for `key` while no block since may hold `topic` from `address`. */
  async get<T>(key: string, address: string, topic: string, read: () => Promise<T>): Promise<T> {
    const head = this.witness?.followedHead();
    if (!head) return read();
    const kept = this.kept.get(key);
    if (kept && this.unchanged(kept.checked ?? kept.at, address, topic)) {
      kept.checked = head;
      return kept.value as T;
    }
    // The head is taken before the read: the answer is at least as new as it, so a change in a
    // later block is caught when that block's header comes.
    const value = await read();
    if (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(key, { value, at: head });
    return value;
  }

  /**
   * Keeps `value` for `key` as of block `at`: the view's new value, told by its event in a block
   * proven to hold only the engine's transactions (OwnBlocks), whose logs are then all the block's:
   * the value after `at` is the last such event's. A later read of the view is kept instead.
   */
  learn(key: string, value: unknown, at: BlockRef): void {
    if (!this.witness?.followedHead()) return;
    const kept = this.kept.get(key);
    if (kept && kept.at.number > at.number) return;
    if (!kept && this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(key, { value, at, learned: true });
  }

  /**
   * Forgets what is kept of `address`: its own write that changes a kept view was just answered,
   * maybe from a receipt read before the feed saw its block (an automining node). A value learned
   * at `minedAt` or later already holds that write, and stays.
   */
  forget(address: string, minedAt?: number): void {
    const prefix = `${address.toLowerCase()}:`;
    for (const [key, kept] of this.kept) {
      if (!key.startsWith(prefix)) continue;
      if (kept.learned && minedAt !== undefined && kept.at.number >= minedAt) continue;
      this.kept.delete(key);
    }
  }

  private unchanged(at: BlockRef, address: string, topic: string): boolean {
    const headers = this.witness?.headersSince(at);
    if (!headers) return false;
    return headers.every(
      (h) => h.logsBloom !== undefined && !(bloomMayHold(h.logsBloom, address) && bloomMayHold(h.logsBloom, topic)),
    );
  }
}
