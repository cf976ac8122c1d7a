import { collectionInterface } from "../chain/collection";
import type { Receipt } from "../chain/receipt";
import type { OperationKind } from "../engine";

/** The engine's operation names of a job's batches (not /nft routes: GET /nft/operations shows them as such). */
export const JOB_OPERATIONS = { airdrop: "jobAirdrop", whitelist: "jobWhitelist" } as const;

let topics: { transfer: string; whitelistAdded: string } | undefined;
function eventTopics() {
  const iface = collectionInterface();
  topics ??= {
    transfer: iface.getEvent("Transfer")!.topicHash,
    whitelistAdded: iface.getEvent("WhitelistAdded")!.topicHash,
  };
  return topics;
}

function* logsOf(receipt: Receipt, contractAddress: string, topic: string) {
  const address = contractAddress.toLowerCase();
  for (const log of receipt.logs)
    if (log.address.toLowerCase() === address && log.topics[0]?.toLowerCase() === topic) yield log;
}

/** The address in an indexed topic, lowercase. */
const topicAddress = (topic: string) => `0x${topic.slice(-40)}`.toLowerCase();

/** Token ids minted to each recipient (lowercase address → ids), from the Transfer logs from the zero address. */
function mintedByRecipient(receipt: Receipt, contractAddress: string): Record<string, string[]> {
  const minted: Record<string, string[]> = {};
  for (const log of logsOf(receipt, contractAddress, eventTopics().transfer)) {
    if (log.topics.length !== 4 || BigInt(log.topics[1]) !== 0n) continue;
    (minted[topicAddress(log.topics[2])] ??= []).push(BigInt(log.topics[3]).toString());
  }
  return minted;
}

/** Addresses a receipt shows newly whitelisted (lowercase). */
function whitelistAdded(receipt: Receipt, contractAddress: string): string[] {
  return [...logsOf(receipt, contractAddress, eventTopics().whitelistAdded)].map((log) => topicAddress(log.topics[1]));
}

/** What a batch cost: its gas and the wei paid for it. */
const spent = (receipt: Receipt) => ({
  gasUsed: receipt.gasUsed.toString(),
  weiSpent: (receipt.gasUsed * (receipt.effectiveGasPrice ?? 0n)).toString(),
});

/** How the engine reads a batch's answer from its receipt. */
export const JOB_OPERATION_KINDS = new Map<string, OperationKind>([
  [
    JOB_OPERATIONS.airdrop,
    {
      successStatus: 200,
      result: (receipt, op) => ({
        ...op.context,
        minted: mintedByRecipient(receipt, op.contractAddress!),
        ...spent(receipt),
      }),
    },
  ],
  [
    JOB_OPERATIONS.whitelist,
    {
      successStatus: 200,
      result: (receipt, op) => ({
        ...op.context,
        added: whitelistAdded(receipt, op.contractAddress!),
        ...spent(receipt),
      }),
    },
  ],
]);
