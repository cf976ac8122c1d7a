import { ruleHolds, type ApprovalRule } from "../access";
import { JOB_OPERATIONS } from "./operation-kinds";
import type { JobEntry, JobKind } from "./rows";

/**
 * The operation names a key's approval rule may give a job's writes: the single write that does
 * what its batches do (the first, which its approval's plan names), the other single writes of the
 * same effect, and the batches' own operation names (as GET /nft/operations shows them).
 */
export const RULE_OPERATIONS: Record<JobKind, readonly string[]> = {
  airdrop: ["airdrop", JOB_OPERATIONS.airdrop],
  whitelist: ["addToWhitelist", "addUserAddressToWhitelist", JOB_OPERATIONS.whitelist],
};

/**
 * Whether `rule` would hold any of the job's rows, each read as the write the single-write path
 * judges (ruleHolds): the job's operation, no value (a job's calls pay nothing), an airdrop row's
 * amount as its mintAmount. A rule holds a larger amount whenever it holds a smaller one, so the
 * largest row answers for all of them.
 */
export function ruleHoldsJob(rule: ApprovalRule | null | undefined, kind: JobKind, entries: JobEntry[]): boolean {
  if (!rule) return false;
  const mintAmount = kind === "airdrop" ? largestAmount(entries) : undefined;
  return RULE_OPERATIONS[kind].some((operation) => ruleHolds(rule, { operation, value: 0n, mintAmount }));
}

/** An airdrop's totals as its approval shows them: the tokens over all rows, and the largest row. */
export function amountsOf(kind: JobKind, entries: JobEntry[]): { totalAmount?: string; largestAmount?: string } {
  if (kind !== "airdrop") return {};
  const total = entries.reduce((sum, entry) => sum + entry.amount, 0n);
  return { totalAmount: total.toString(), largestAmount: largestAmount(entries).toString() };
}

function largestAmount(entries: JobEntry[]): bigint {
  let largest = 0n;
  for (const entry of entries) if (entry.amount > largest) largest = entry.amount;
  return largest;
}
