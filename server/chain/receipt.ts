import { getAddress } from "ethers";

/** A transaction receipt as the service uses it, read from the node's JSON without ethers' wrappers. */
export interface Receipt {
  hash: string;
  status: number;
  blockNumber: number;
  blockHash: string;
  gasUsed: bigint;
  /** What each unit of gas cost: base fee + the tip actually paid. */
  effectiveGasPrice: bigint | null;
  contractAddress: string | null;
  /** The transaction's position in its block, where the node gave it (own-blocks.ts needs it). */
  transactionIndex?: number;
  /** `logIndex`: the log's position in its block, where the node gave it. */
  logs: Array<{ address: string; topics: string[]; data: string; logIndex?: number }>;
}

interface ReceiptJson {
  transactionHash: string;
  status?: string;
  blockNumber: string;
  blockHash: string;
  gasUsed: string;
  effectiveGasPrice?: string;
  contractAddress?: string | null;
  transactionIndex?: string;
  logs?: Array<{ address: string; topics: string[]; data: string; logIndex?: string }>;
}

/** The receipt in an eth_getTransactionReceipt answer, or null while the transaction is unmined. */
export function parseReceipt(json: unknown): Receipt | null {
  if (json === null || typeof json !== "object") return null;
  const r = json as ReceiptJson;
  if (!r.blockNumber || !r.blockHash) return null;
  return {
    hash: r.transactionHash,
    status: r.status === undefined ? 1 : Number(BigInt(r.status)),
    blockNumber: Number(BigInt(r.blockNumber)),
    blockHash: r.blockHash,
    gasUsed: BigInt(r.gasUsed),
    effectiveGasPrice: r.effectiveGasPrice ? BigInt(r.effectiveGasPrice) : null,
    contractAddress: r.contractAddress ? getAddress(r.contractAddress) : null,
    ...(typeof r.transactionIndex === "string" ? { transactionIndex: Number(BigInt(r.transactionIndex)) } : {}),
    logs: (r.logs ?? []).map((log) => ({
      address: log.address,
      topics: log.topics,
      data: log.data,
      ...(typeof log.logIndex === "string" ? { logIndex: Number(BigInt(log.logIndex)) } : {}),
    })),
  };
}
