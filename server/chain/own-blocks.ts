import { toQuantity } from "ethers";
import type { Receipt } from "./receipt";
import { transactionsRoot } from "./transactions-root";

/** A log as eth_getLogs answers it (hex quantities). */
export interface ChainLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
}

/** What a proof needs of a kept header (BlockFeed's BlockHeader has it). */
export interface RootedHeader {
  number: number;
  hash: string;
  transactionsRoot?: string;
}

/** A transaction of the engine's, mined: its receipt and the bytes it was signed as. */
export interface OwnTransaction {
  receipt: Receipt;
  raw: string;
}

/** Proven blocks kept (by hash): a few minutes of blocks is all the index and the views look back. */
const MAX_PROVEN = 256;
/** How long a question about a block waits for a follower pass that is reading receipts. */
const WAIT_MS = 2_000;
/** Blocks whose transactions wait for the feed to read their header, at most (the newest kept). */
const MAX_AWAITING_HEADER = 64;

/**
 * Blocks proven to hold nothing but the engine's own transactions, with every log they hold. The
 * follower has the receipts of its transactions in a block; when their signed bytes, in the
 * receipts' order, give the header's `transactionsRoot`, the block holds those and nothing else,
 * so their logs are all of the block's: the collection index and the settled views need no
 * eth_getLogs of it. A block with anyone else's transaction, one of ours whose receipt this pass
 * did not read, or a header without the root is simply not proven: its readers ask the node.
 */
export class OwnBlocks {
  private readonly proven = new Map<string, ChainLog[]>();
  /** Follower passes reading receipts now, each up to the head it was started at. */
  private readonly looks = new Set<{ upTo: number; done: Promise<void> }>();
  private readonly learners = new Set<(block: RootedHeader, logs: ChainLog[]) => void>();
  /**
   * Transactions whose block the feed has not read yet, by block number: on an automining chain the
   * engine reads a write's receipt before the feed polls its block. Proven when the header comes.
   */
  private readonly awaitingHeader = new Map<number, OwnTransaction[]>();

  constructor(private readonly headerAt: (number: number) => RootedHeader | undefined) {}

  /**
   * A follower pass at `head` is reading receipts: questions about blocks up to `head` wait for it
   * (at most WAIT_MS). Call the answer when its receipts are proven or given up.
   */
  looking(head: number): () => void {
    let end!: () => void;
    const look = { upTo: head, done: new Promise<void>((resolve) => (end = resolve)) };
    this.looks.add(look);
    return () => {
      this.looks.delete(look);
      end();
    };
  }

  /** Told of each block proven, with its logs (after the index's readers can have them). */
  onProven(learner: (block: RootedHeader, logs: ChainLog[]) => void): void {
    this.learners.add(learner);
  }

  /** Proves what blocks it can from the engine's mined transactions (any, in any order); answers the blocks proven. */
  prove(transactions: OwnTransaction[]): RootedHeader[] {
    const byBlock = new Map<string, OwnTransaction[]>();
    for (const tx of transactions) {
      const hash = tx.receipt.blockHash.toLowerCase();
      byBlock.set(hash, [...(byBlock.get(hash) ?? []), tx]);
    }
    const proven: Array<{ header: RootedHeader; logs: ChainLog[] }> = [];
    for (const [hash, txs] of byBlock) {
      if (this.proven.has(hash)) continue;
      const header = this.headerAt(txs[0].receipt.blockNumber);
      if (!header) {
        this.awaitHeader(txs);
        continue;
      }
      const logs = header.hash.toLowerCase() === hash ? provenLogs(header, hash, txs) : undefined;
      if (!logs) continue;
      if (this.proven.size >= MAX_PROVEN) this.proven.delete(this.proven.keys().next().value!);
      this.proven.set(hash, logs);
      proven.push({ header, logs });
    }
    for (const { header, logs } of proven) for (const learn of this.learners) learn(header, logs);
    return proven.map(({ header }) => header);
  }

  /** The feed read these headers: the blocks whose transactions waited for them are proven now. */
  headersRead(headers: readonly RootedHeader[]): void {
    if (this.awaitingHeader.size === 0) return;
    const ready: OwnTransaction[] = [];
    for (const { number } of headers) {
      ready.push(...(this.awaitingHeader.get(number) ?? []));
      this.awaitingHeader.delete(number);
    }
    if (ready.length > 0) this.prove(ready);
  }

  private awaitHeader(txs: OwnTransaction[]): void {
    const number = txs[0].receipt.blockNumber;
    const known = this.awaitingHeader.get(number) ?? [];
    const hashes = new Set(known.map((tx) => tx.receipt.hash.toLowerCase()));
    this.awaitingHeader.set(number, [...known, ...txs.filter((tx) => !hashes.has(tx.receipt.hash.toLowerCase()))]);
    while (this.awaitingHeader.size > MAX_AWAITING_HEADER) {
      this.awaitingHeader.delete(Math.min(...this.awaitingHeader.keys()));
    }
  }

  /**
   * Every log of `block` (eth_getLogs order), if it is proven to hold only the engine's
   * transactions; undefined when it is not. Waits first for a follower pass reading its receipts.
   */
  async logsOf(block: { number: number; hash: string }): Promise<ChainLog[] | undefined> {
    const hash = block.hash.toLowerCase();
    const pending = [...this.looks].filter((look) => look.upTo >= block.number).map((look) => look.done);
    if (!this.proven.has(hash) && pending.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, WAIT_MS)));
      await Promise.race([Promise.all(pending), late]);
      clearTimeout(timer);
    }
    return this.proven.get(hash);
  }
}

/** The block's logs when `txs` are exactly its transactions (indexes 0..n-1, the header's root); else undefined. */
function provenLogs(header: RootedHeader, hash: string, txs: OwnTransaction[]): ChainLog[] | undefined {
  if (!header.transactionsRoot) return undefined;
  const ordered = [...txs].sort((a, b) => (a.receipt.transactionIndex ?? -1) - (b.receipt.transactionIndex ?? -1));
  if (!ordered.every((tx, i) => tx.receipt.transactionIndex === i)) return undefined;
  if (transactionsRoot(ordered.map((tx) => tx.raw)) !== header.transactionsRoot.toLowerCase()) return undefined;
  const logs: ChainLog[] = [];
  for (const { receipt } of ordered) {
    for (const log of receipt.logs) {
      if (log.logIndex === undefined) return undefined;
      logs.push({
        address: log.address,
        topics: log.topics,
        data: log.data,
        blockNumber: toQuantity(header.number),
        blockHash: hash,
        transactionHash: receipt.hash.toLowerCase(),
        logIndex: toQuantity(log.logIndex),
      });
    }
  }
  return logs;
}
