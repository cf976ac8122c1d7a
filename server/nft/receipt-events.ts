import { ZeroAddress, type TransactionReceipt } from "ethers";
import { collectionInterface } from "../chain/collection";

/** Ids of the tokens a receipt shows minted by `contractAddress` (Transfer from the zero address). */
export function mintedTokenIds(receipt: TransactionReceipt, contractAddress: string): string[] {
  const ids: string[] = [];
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== contractAddress.toLowerCase()) continue;
    const parsed = collectionInterface().parseLog(log);
    if (parsed?.name === "Transfer" && parsed.args[0] === ZeroAddress) ids.push(parsed.args[2].toString());
  }
  return ids;
}

/** The amount of the collection's Withdrawn event in a receipt, if it emitted one. */
export function withdrawnAmount(receipt: TransactionReceipt, contractAddress: string): bigint | undefined {
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== contractAddress.toLowerCase()) continue;
    const parsed = collectionInterface().parseLog(log);
    if (parsed?.name === "Withdrawn") return parsed.args[1] as bigint;
  }
  return undefined;
}
