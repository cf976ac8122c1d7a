/** Where a stored log of the index came from, as the json_to_recordset rows of its inserts name it. */
export interface LogPlace {
  collectionId: number;
  blockNumber: number;
  logIndex: number;
  blockHash: string;
  transactionHash: string;
}

/** The columns every index log table shares (c, b, i, h, t), for one row of a json_to_recordset insert. */
export function placeColumns(log: LogPlace): { c: number; b: number; i: number; h: string; t: string } {
  return { c: log.collectionId, b: log.blockNumber, i: log.logIndex, h: log.blockHash, t: log.transactionHash };
}
