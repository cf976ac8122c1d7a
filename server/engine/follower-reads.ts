import { toQuantity } from "ethers";
import { parseReceipt, type Receipt } from "../chain/receipt";
import type { Rpc, RpcAnswer } from "../chain/rpc";
import { currentTransaction, type Operation } from "./operation";

/**
 * What the follower asks the chain in a pass, each in one JSON-RPC batch: whether mined operations
 * still are, whether the node knows a transaction, senders' nonces, receipts. Answers only; what to
 * do with them is next-step.ts's, and carrying it out the Follower's.
 */

/**
 * Whether operations seen mined (whose receipt did not come this pass) still are. A reorg is
 * proven when the block at the operation's height has another hash, or when the chain answers
 * that its transaction is in no block (pending again, or in another block), or that neither the
 * block nor the transaction exists any more. The same block hash, or the transaction in that
 * block, keeps it mined; failed lookups prove nothing.
 */
export async function stillMined(rpc: Rpc, ops: Operation[]): Promise<Map<Operation, "mined" | "reorged" | "unknown">> {
  const verdicts = new Map<Operation, "mined" | "reorged" | "unknown">();
  if (ops.length === 0) return verdicts;
  const heights = [...new Set(ops.map((op) => op.blockNumber!))];
  const calls: Array<[string, unknown[]]> = heights.map((n) => ["eth_getBlockByNumber", [toQuantity(n), false]]);
  for (const op of ops) for (const tx of op.transactions) calls.push(["eth_getTransactionByHash", [tx.hash]]);
  let answers: RpcAnswer[];
  try {
    answers = await rpc.batch(calls);
  } catch {
    for (const op of ops) verdicts.set(op, "unknown");
    return verdicts;
  }
  const blocks = new Map<number, RpcAnswer>(heights.map((n, i) => [n, answers[i]]));
  let next = heights.length;
  for (const op of ops) {
    const block = blocks.get(op.blockNumber!)!;
    const txs = op.transactions.map(() => answers[next++]);
    verdicts.set(op, minedVerdict(op, block, txs));
  }
  return verdicts;
}

/**
 * Whether the node knows each operation's current transaction. A nonce below the sender's pending
 * count is in the node's hands; only the others are asked for by hash. A failed lookup proves nothing.
 * "known" only spares a rebroadcast: it never makes a transaction at that nonce ours. Whether the
 * operation was mined is told by its own hashes alone (receiptsOf), before any re-sign (issue 51).
 */
export async function knownToNode(rpc: Rpc, ops: Operation[]): Promise<Map<Operation, "known" | "unknown">> {
  const known = new Map<Operation, "known" | "unknown">();
  if (ops.length === 0) return known;
  const senders = [...new Set(ops.map((op) => op.from))];
  const counts = await rpc.batch(senders.map((from) => ["eth_getTransactionCount", [from, "pending"]]));
  const pending = new Map<string, number>();
  counts.forEach((answer, i) => {
    if ("result" in answer) pending.set(senders[i], Number(BigInt(answer.result as string)));
  });
  const doubtful: Operation[] = [];
  for (const op of ops) {
    const count = pending.get(op.from);
    if (count === undefined) continue;
    if (op.nonce! < count) known.set(op, "known");
    else doubtful.push(op);
  }
  const answers = await rpc.batch(doubtful.map((op) => ["eth_getTransactionByHash", [currentTransaction(op)!.hash]]));
  answers.forEach((answer, i) => {
    if ("result" in answer) known.set(doubtful[i], answer.result === null ? "unknown" : "known");
  });
  return known;
}

/** The senders' nonces on chain (`latest`), read after this pass's receipts. */
export async function latestNonces(rpc: Rpc, ops: Operation[]): Promise<Map<string, number>> {
  const senders = [...new Set(ops.map((op) => op.from))];
  const nonces = new Map<string, number>();
  if (senders.length === 0) return nonces;
  const answers = await rpc.batch(senders.map((from) => ["eth_getTransactionCount", [from, "latest"]]));
  answers.forEach((answer, i) => {
    if ("result" in answer) nonces.set(senders[i], Number(BigInt(answer.result as string)));
  });
  return nonces;
}

/** The receipt of each operation's mined transaction (any of its hashes), by operation id. */
export async function receiptsOf(rpc: Rpc, ops: Operation[]): Promise<Map<string, Receipt>> {
  const calls: Array<[string, unknown[]]> = [];
  const owners: string[] = [];
  for (const op of ops) {
    for (const tx of op.transactions) {
      calls.push(["eth_getTransactionReceipt", [tx.hash]]);
      owners.push(op.id);
    }
  }
  const receipts = new Map<string, Receipt>();
  if (calls.length === 0) return receipts;
  const answers = await rpc.batch(calls);
  answers.forEach((answer, i) => {
    const receipt = "result" in answer ? parseReceipt(answer.result) : null;
    if (receipt) receipts.set(owners[i], receipt);
  });
  return receipts;
}

/** See stillMined. */
function minedVerdict(op: Operation, block: RpcAnswer, txs: RpcAnswer[]): "mined" | "reorged" | "unknown" {
  const blockHash = op.blockHash?.toLowerCase();
  let blockSays: "same" | "other" | "missing" | "unknown" = "unknown";
  if ("result" in block) {
    const found = block.result as { hash?: string } | null;
    if (found === null) blockSays = "missing";
    else if (typeof found.hash === "string") blockSays = found.hash.toLowerCase() === blockHash ? "same" : "other";
  }
  if (blockSays === "same") return "mined";
  if (blockSays === "other") return "reorged";
  const where = txs.map((answer) => {
    if (!("result" in answer)) return "unknown";
    const tx = answer.result as { blockHash?: string | null } | null;
    if (tx === null) return "absent";
    if (!tx.blockHash) return "unmined";
    return tx.blockHash.toLowerCase() === blockHash ? "here" : "elsewhere";
  });
  if (where.includes("here")) return "mined";
  if (where.includes("elsewhere") || where.includes("unmined")) return "reorged";
  if (blockSays === "missing" && where.length > 0 && where.every((w) => w === "absent")) return "reorged";
  return "unknown";
}
