import { toQuantity } from "ethers";
import type { ChainLog } from "../chain/own-blocks";
import type { Rpc } from "../chain/rpc";
import { ALLOWLIST_MINTED_TOPIC, VOUCHER_REDEEMED_TOPIC, dropEvent, type DropLog } from "./drop-events";
import {
  BATCH_METADATA_UPDATE_TOPIC,
  METADATA_UPDATE_TOPIC,
  metadataUpdate,
  type MetadataUpdateLog,
} from "./metadata-events";
import { ZERO_ADDRESS, type TransferLog } from "./store";
import {
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  editionTransfers,
  type EditionTransferLog,
} from "./edition-events";

/** keccak256("Transfer(address,address,uint256)"): ERC-721's and ERC-20's, told apart by their topic count. */
export const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";

/** Logs a range should hold: big enough to be few calls, small enough for a node's response caps. */
const TARGET_LOGS = 5_000;
/** Small at first: a dense stretch (1,000 logs a block) must not become one huge answer; sparse ones grow 4x a call. */
const INITIAL_SPAN = 16;
const MAX_SPAN = 50_000;
/** Successful calls after a refusal for its span before a range above the refused one is tried again. */
const PROBE_AFTER = 50;

/**
 * The block span of the next eth_getLogs. Nodes refuse a range for one of two reasons, and each
 * teaches something else: too many blocks (geth's "exceed maximum block range: 1000") sets a
 * ceiling on the span, tried again above after enough calls went through; too many logs (Infura's
 * "query returned more than 10000 results. Try with this block range [a, b]") lowers the logs a
 * range aims at, the span then following the density of logs where the index reads.
 */
export class LogRangeSizer {
  span = INITIAL_SPAN;
  private ceiling = MAX_SPAN;
  private targetLogs = TARGET_LOGS;
  private sinceRefusal = 0;

  /** A refusal of a `span`-block range with the node's `message`. */
  refused(span: number, message = ""): void {
    const { suggestedSpan, maxLogs, maxBlocks } = readRefusal(message);
    const smaller = (n: number | undefined) => Math.max(1, Math.min(n ?? Math.floor(span / 2), span - 1));
    if (maxLogs !== undefined || (suggestedSpan !== undefined && maxBlocks === undefined)) {
      this.targetLogs = Math.max(
        1,
        maxLogs !== undefined ? Math.floor(maxLogs * 0.8) : Math.floor(this.targetLogs / 2),
      );
      this.span = smaller(suggestedSpan);
      return;
    }
    if (maxBlocks === undefined && suggestedSpan === undefined && !/range|block/i.test(message)) {
      this.span = smaller(undefined); // a failure that names no cap (a busy backend): smaller, for now only
      return;
    }
    this.ceiling = smaller(maxBlocks ?? suggestedSpan);
    this.span = Math.min(this.span, this.ceiling);
    this.sinceRefusal = 0;
  }

  succeeded(span: number, logs: number): void {
    if (++this.sinceRefusal >= PROBE_AFTER && this.ceiling < MAX_SPAN) {
      this.ceiling = Math.min(MAX_SPAN, this.ceiling * 2);
      this.sinceRefusal = 0;
    }
    const bySize = logs > 0 ? Math.floor((span * this.targetLogs) / logs) : span * 4;
    this.span = Math.max(1, Math.min(this.ceiling, bySize, span * 4));
  }
}

/** What a node's refusal of an eth_getLogs range says, in the words hosted nodes use. */
export function readRefusal(message: string): { suggestedSpan?: number; maxLogs?: number; maxBlocks?: number } {
  const number = (digits: string, k?: string) => Number(digits.replace(/,/g, "")) * (k ? 1000 : 1);
  const out: { suggestedSpan?: number; maxLogs?: number; maxBlocks?: number } = {};
  // Alchemy, Infura: "… this block range should work: [0x1, 0x4b0]" / "Try with this block range [0x10A, 0x1D4]."
  const range = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i.exec(message);
  if (range) {
    const span = Number(BigInt(range[2])) - Number(BigInt(range[1])) + 1;
    if (span >= 1) out.suggestedSpan = span;
  }
  // "query returned more than 10000 results", "with a cap of 10K logs", "response size … 10000 logs"
  const logs =
    /more than ([\d,]+)(k)? (?:results|logs)|cap of ([\d,]+)(k)? logs|([\d,]+)(k)? logs? (?:limit|in the response)/i.exec(
      message,
    );
  if (logs) {
    const [digits, k] = logs[1] ? [logs[1], logs[2]] : logs[3] ? [logs[3], logs[4]] : [logs[5], logs[6]];
    out.maxLogs = number(digits, k);
  }
  // geth-style and others: "exceed maximum block range: 1000", "limited to a 10000 block range", "block range limit (2000)".
  const blocks =
    /(?:maximum block range|block range (?:limit|is limited to|too (?:large|wide))|limited to (?:a )?)[:\s(]*([\d,]+)(k)?/i.exec(
      message,
    ) ?? /([\d,]+)(k)? block range/i.exec(message);
  if (blocks && !out.maxLogs) out.maxBlocks = number(blocks[1], blocks[2]);
  return out;
}

/** A range the node would not answer, with its message (kept for the logs, never a URL). */
export class RangeRefused extends Error {
  constructor(
    readonly span: number,
    message: string,
  ) {
    super(message.slice(0, 300));
    this.name = "RangeRefused";
  }
}

/** A log of eth_getLogs, or of a block proven to hold only the engine's transactions (OwnBlocks). */
type RawLog = ChainLog & { removed?: boolean };

/** The events the index reads, as topic 0: what its eth_getLogs filter asks for. */
const INDEXED_TOPICS = [
  TRANSFER_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_BATCH_TOPIC,
  ALLOWLIST_MINTED_TOPIC,
  VOUCHER_REDEEMED_TOPIC,
  METADATA_UPDATE_TOPIC,
  BATCH_METADATA_UPDATE_TOPIC,
];
const INDEXED = new Set(INDEXED_TOPICS);

/**
 * What one range holds: the Transfer logs, the ERC-1155 moves (edition-events.ts), the drop events
 * of the reference contract (drop-events.ts), and the ERC-4906 events of any collection (metadata-events.ts).
 */
export interface RangeLogs {
  transfers: TransferLog[];
  editions: EditionTransferLog[];
  drops: DropLog[];
  metadata: MetadataUpdateLog[];
}

/**
 * The ERC-721 Transfer logs, ERC-1155 moves and the drop events of `addresses` (lower-case, by collection id) in
 * blocks `from`..`to`, in chain order, from one eth_getLogs. A JSON-RPC error answer throws
 * RangeRefused; a transport failure throws as is.
 */
export async function collectionLogs(
  rpc: Rpc,
  addresses: Map<string, number>,
  from: number,
  to: number,
): Promise<RangeLogs> {
  const filter = {
    address: [...addresses.keys()],
    topics: [INDEXED_TOPICS],
    fromBlock: toQuantity(from),
    toBlock: toQuantity(to),
  };
  const answer = await rpc.answer("eth_getLogs", [filter]);
  if ("error" in answer) throw new RangeRefused(to - from + 1, answer.error.message);
  if (!Array.isArray(answer.result)) throw new RangeRefused(to - from + 1, "eth_getLogs answered no list");
  return rangeLogsOf(answer.result as RawLog[], addresses);
}

/**
 * What `logs` (eth_getLogs' answer, or every log of proven blocks) hold for `addresses`, as
 * collectionLogs answers it: the logs of other addresses and other events are left out, as the
 * filter leaves them out.
 */
export function rangeLogsOf(logs: RawLog[], addresses: Map<string, number>): RangeLogs {
  const transfers: TransferLog[] = [];
  const editions: EditionTransferLog[] = [];
  const drops: DropLog[] = [];
  const metadata: MetadataUpdateLog[] = [];
  for (const raw of logs) {
    const collectionId = addresses.get(raw.address.toLowerCase());
    if (raw.removed || collectionId === undefined || !INDEXED.has(raw.topics[0]?.toLowerCase())) continue;
    const blockNumber = Number(BigInt(raw.blockNumber));
    const blockHash = raw.blockHash.toLowerCase();
    const logIndex = Number(BigInt(raw.logIndex));
    const transactionHash = raw.transactionHash.toLowerCase();
    if (raw.topics[0] !== TRANSFER_TOPIC) {
      const base = { collectionId, blockNumber, blockHash, logIndex, transactionHash };
      const moved = editionTransfers(raw, base);
      if (moved) {
        for (const move of moved) editions.push(move);
        continue;
      }
      const drop = dropEvent(raw, base);
      if (drop) drops.push(drop);
      const update = drop ? undefined : metadataUpdate(raw, base);
      if (update) metadata.push(update);
      continue;
    }
    // ERC-721's Transfer indexes all three arguments; ERC-20's (same signature) keeps the amount in data.
    if (raw.topics.length !== 4) continue;
    // A literal, not a spread of the fields above: V8 copies a spread object slowly (log-rows.ts).
    transfers.push({
      collectionId,
      blockNumber,
      blockHash,
      logIndex,
      transactionHash,
      from: topicAddress(raw.topics[1]),
      to: topicAddress(raw.topics[2]),
      tokenId: BigInt(raw.topics[3]).toString(),
    });
  }
  const chainOrder = (a: { blockNumber: number; logIndex: number }, b: { blockNumber: number; logIndex: number }) =>
    a.blockNumber - b.blockNumber || a.logIndex - b.logIndex;
  transfers.sort(chainOrder);
  editions.sort((a, b) => chainOrder(a, b) || a.batchIndex - b.batchIndex);
  drops.sort(chainOrder);
  metadata.sort(chainOrder);
  return { transfers, editions, drops, metadata };
}

function topicAddress(topic: string): string {
  const address = `0x${topic.slice(-40).toLowerCase()}`;
  return address === ZERO_ADDRESS ? ZERO_ADDRESS : address;
}
