import { ZeroAddress, type LogDescription } from "ethers";
import { collectionInterface } from "../chain/collection";
import type { Receipt } from "../chain/receipt";

/** The events `contractAddress` emitted in a receipt, decoded with the collection ABI. */
function* collectionEvents(receipt: Receipt, contractAddress: string): Generator<LogDescription> {
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== contractAddress.toLowerCase()) continue;
    const parsed = collectionInterface().parseLog(log);
    if (parsed) yield parsed;
  }
}

/** Ids of the tokens a receipt shows minted by `contractAddress` (Transfer from the zero address). */
export function mintedTokenIds(receipt: Receipt, contractAddress: string): string[] {
  const ids: string[] = [];
  for (const event of collectionEvents(receipt, contractAddress)) {
    if (event.name === "Transfer" && event.args[0] === ZeroAddress) ids.push(event.args[2].toString());
  }
  return ids;
}

/** The amount of the collection's Withdrawn event in a receipt, if it emitted one. */
export function withdrawnAmount(receipt: Receipt, contractAddress: string): bigint | undefined {
  for (const event of collectionEvents(receipt, contractAddress)) {
    if (event.name === "Withdrawn") return event.args[1] as bigint;
  }
  return undefined;
}
