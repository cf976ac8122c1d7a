import { dataLength } from "ethers";
import { collectionInterface } from "../chain/collection";
import { editionsInterface } from "../chain/editions";
import type { Receipt } from "../chain/receipt";

/**
 * The two events answers are read from, by topic hash, computed once from the collection's ABI.
 * Their words are read directly: ethers' parseLog hashes the signature of every event of the ABI
 * for each log, and its decoder builds a Result per log, which made decoding a block of 200 mints
 * cost more than answering them.
 */
let topics: { transfer: string; withdrawn: string } | undefined;

function eventTopics() {
  const iface = collectionInterface();
  topics ??= { transfer: iface.getEvent("Transfer")!.topicHash, withdrawn: iface.getEvent("Withdrawn")!.topicHash };
  return topics;
}

/** The logs `contractAddress` emitted in a receipt with `topic` first. */
function* logsOf(receipt: Receipt, contractAddress: string, topic: string) {
  const address = contractAddress.toLowerCase();
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() === address && log.topics[0]?.toLowerCase() === topic) yield log;
  }
}

/**
 * Ids of the tokens a receipt shows minted by `contractAddress`: Transfer(from, to, tokenId), all
 * three indexed (ERC-721), from the zero address.
 */
export function mintedTokenIds(receipt: Receipt, contractAddress: string): string[] {
  const ids: string[] = [];
  for (const log of logsOf(receipt, contractAddress, eventTopics().transfer)) {
    if (log.topics.length === 4 && BigInt(log.topics[1]) === 0n) ids.push(BigInt(log.topics[3]).toString());
  }
  return ids;
}

/** The amount of the collection's Withdrawn(address indexed to, uint256 amount) in a receipt, if it emitted one. */
export function withdrawnAmount(receipt: Receipt, contractAddress: string): bigint | undefined {
  for (const log of logsOf(receipt, contractAddress, eventTopics().withdrawn)) {
    if (log.topics.length === 2 && dataLength(log.data) === 32) return BigInt(log.data);
  }
  return undefined;
}

let editionCreatedTopic: string | undefined;

/** The token id of the edition a receipt shows created: EditionCreated(uint256 indexed tokenId, …) of NFTEditions. */
export function createdEditionId(receipt: Receipt, contractAddress: string): string | undefined {
  editionCreatedTopic ??= editionsInterface().getEvent("EditionCreated")!.topicHash;
  for (const log of logsOf(receipt, contractAddress, editionCreatedTopic)) {
    if (log.topics.length === 2) return BigInt(log.topics[1]).toString();
  }
  return undefined;
}

let tokenWithdrawnTopic: string | undefined;

/** The amount of PaymentTokenWithdrawn(address indexed to, address indexed token, uint256 amount) in a receipt, if emitted. */
export function tokenWithdrawnAmount(receipt: Receipt, contractAddress: string): bigint | undefined {
  tokenWithdrawnTopic ??= collectionInterface().getEvent("PaymentTokenWithdrawn")!.topicHash;
  for (const log of logsOf(receipt, contractAddress, tokenWithdrawnTopic)) {
    if (log.topics.length === 3 && dataLength(log.data) === 32) return BigInt(log.data);
  }
  return undefined;
}
