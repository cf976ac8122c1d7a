import { z } from "zod";
import type { KnownHead } from "../chain/chain-liveness";
import "../http/openapi";

/** Present only while the chain is down: the answer came from the store alone, with the last head known. */
export const chainStatus = z.literal("down").optional().openapi({
  description:
    "down: no URL of the chain answers; the answer is the store's alone, and blockNumber the last head known",
});

/** A store read's head fields: `blockNumber`, and `chainStatus: "down"` while the chain does not answer. */
export function headView(head: KnownHead): { blockNumber: number | null; chainStatus?: "down" } {
  return { blockNumber: head.blockNumber, ...(head.down ? { chainStatus: "down" as const } : {}) };
}
