/**
 * ERC-1155's TransferSingle and TransferBatch in the index (migration 34), of any ERC-1155, not
 * only the reference contract: one row per id a log moved, with its amount.
 */
import { id } from "ethers";

export const TRANSFER_SINGLE_TOPIC = id("TransferSingle(address,address,address,uint256,uint256)");
export const TRANSFER_BATCH_TOPIC = id("TransferBatch(address,address,address,uint256[],uint256[])");

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/** One id moved by a TransferSingle or TransferBatch. Addresses lower-case, id and amount decimal strings. */
export interface EditionTransferLog {
  collectionId: number;
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  /** The id's place in a TransferBatch (0 for a TransferSingle). */
  batchIndex: number;
  transactionHash: string;
  from: string;
  to: string;
  tokenId: string;
  amount: string;
}

interface LogPlace {
  collectionId: number;
  blockNumber: number;
  blockHash: string;
  logIndex: number;
  transactionHash: string;
}

const HEX_WORD = 64;
const topicAddress = (topic: string) => `0x${topic.slice(-40).toLowerCase()}`;

/**
 * The ids `raw` moved, or undefined when it is neither event. A move of amount 0, or from zero to
 * zero, changes nothing and is left out; a log whose data does not fit the event (another
 * contract's event of the same name) is none.
 */
export function editionTransfers(
  raw: { topics: string[]; data: string },
  place: LogPlace,
): EditionTransferLog[] | undefined {
  const [topic] = raw.topics;
  if ((topic !== TRANSFER_SINGLE_TOPIC && topic !== TRANSFER_BATCH_TOPIC) || raw.topics.length !== 4) return undefined;
  const from = topicAddress(raw.topics[2]);
  const to = topicAddress(raw.topics[3]);
  const moved = topic === TRANSFER_SINGLE_TOPIC ? singleData(raw.data) : batchData(raw.data);
  if (!moved) return undefined;
  if (from === ZERO_ADDRESS && to === ZERO_ADDRESS) return [];
  const out: EditionTransferLog[] = [];
  for (let i = 0; i < moved.ids.length; i++) {
    if (moved.amounts[i] === 0n) continue;
    // A literal, not a spread of `place`: V8 copies a spread object slowly (log-rows.ts).
    out.push({
      collectionId: place.collectionId,
      blockNumber: place.blockNumber,
      blockHash: place.blockHash,
      logIndex: place.logIndex,
      batchIndex: i,
      transactionHash: place.transactionHash,
      from,
      to,
      tokenId: moved.ids[i].toString(),
      amount: moved.amounts[i].toString(),
    });
  }
  return out;
}

/** The `n`th 32-byte word of `hex` (no 0x), or undefined past its end. */
function word(hex: string, n: number): bigint | undefined {
  const start = n * HEX_WORD;
  if (start + HEX_WORD > hex.length) return undefined;
  return BigInt(`0x${hex.slice(start, start + HEX_WORD)}`);
}

function singleData(data: string): { ids: bigint[]; amounts: bigint[] } | undefined {
  if (data.length !== 2 + 2 * HEX_WORD) return undefined;
  const hex = data.slice(2);
  return { ids: [word(hex, 0)!], amounts: [word(hex, 1)!] };
}

/** The two uint256[] of a TransferBatch's data (ABI: two offsets, then each array's length and words). */
function batchData(data: string): { ids: bigint[]; amounts: bigint[] } | undefined {
  const hex = data.slice(2);
  const array = (offsetWord: number): bigint[] | undefined => {
    const offset = word(hex, offsetWord);
    if (offset === undefined || offset % 32n !== 0n || offset > BigInt(hex.length)) return undefined;
    const at = Number(offset / 32n);
    const length = word(hex, at);
    if (length === undefined || length > BigInt(hex.length / HEX_WORD)) return undefined;
    const values: bigint[] = [];
    for (let i = 1; i <= Number(length); i++) {
      const value = word(hex, at + i);
      if (value === undefined) return undefined;
      values.push(value);
    }
    return values;
  };
  const ids = array(0);
  const amounts = array(1);
  if (!ids || !amounts || ids.length !== amounts.length) return undefined;
  return { ids, amounts };
}
