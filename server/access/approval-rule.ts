import { z } from "zod";
import { decimalRange } from "../http/fields";
import "../http/openapi";

/**
 * A key's approval rule: a write of the key matching any part is held for a person to decide
 * (API.md, "Approvals"). Each part is optional; a rule with none holds nothing.
 */
export interface ApprovalRule {
  /** Operation names ("withdraw", "setCost", …) always held. */
  operations?: string[];
  /** A call whose value (wei) is above this is held. Decimal string. */
  valueAbove?: string;
  /** A mint whose mintAmount is above this is held. */
  mintAmountAbove?: number;
}

export const ApprovalRuleSchema = z
  .object({
    operations: z
      .array(z.string().min(1).max(100))
      .max(100)
      .optional()
      .openapi({ example: ["withdraw", "setCost"] }),
    valueAbove: z
      .string()
      .regex(decimalRange(0n, 2n ** 256n - 1n), "valueAbove must be a decimal integer (wei or token units)")
      .optional()
      .openapi({ example: "1000000000000000000", description: "Held when the call's value is above this" }),
    mintAmountAbove: z.number().int().nonnegative().optional().openapi({ example: 100 }),
  })
  .strict()
  .openapi("ApprovalRule", {
    description: "Writes of the key that match any part wait for a decision (POST /approvals/{id}/approve)",
  });

/** What a write is, as a rule reads it. */
export interface HeldCandidate {
  operation: string;
  value: bigint;
  mintAmount?: bigint;
}

/** Whether `rule` holds the write `write`. */
export function ruleHolds(rule: ApprovalRule | null | undefined, write: HeldCandidate): boolean {
  if (!rule) return false;
  if (rule.operations?.includes(write.operation)) return true;
  if (rule.valueAbove !== undefined && write.value > BigInt(rule.valueAbove)) return true;
  return (
    rule.mintAmountAbove !== undefined &&
    write.mintAmount !== undefined &&
    write.mintAmount > BigInt(rule.mintAmountAbove)
  );
}

/**
 * What `given` lets through that `maker` holds, in words (a key made by a key carries at least its
 * maker's rule), or null when it is as strict or stricter.
 */
export function ruleLooser(maker: ApprovalRule | null | undefined, given: ApprovalRule | null): string | null {
  if (!maker) return null;
  if (!given) return "no approval rule (this key's writes need approval)";
  const missing = (maker.operations ?? []).find((op) => !given.operations?.includes(op));
  if (missing) return `approval.operations without ${missing}`;
  if (
    maker.valueAbove !== undefined &&
    (given.valueAbove === undefined || BigInt(given.valueAbove) > BigInt(maker.valueAbove))
  )
    return `approval.valueAbove above ${maker.valueAbove}`;
  if (
    maker.mintAmountAbove !== undefined &&
    (given.mintAmountAbove === undefined || given.mintAmountAbove > maker.mintAmountAbove)
  )
    return `approval.mintAmountAbove above ${maker.mintAmountAbove}`;
  return null;
}
