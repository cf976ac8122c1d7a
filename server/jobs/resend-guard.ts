import type { ResendGuard } from "../engine";
import type { JobStore } from "./job-store";

/**
 * Withdraws a cancelled job's operations before they are broadcast: a batch's first broadcast, and
 * what the engine's follower sends on its own (a batch recorded, then the process died before its
 * broadcast). The check and the broadcast run under the job's row lock, which the cancel takes
 * too: a broadcast either ends before the cancel commits, or sees the job cancelled. So nothing of
 * a job goes out after its cancel is answered, however long a batch took between its claim and its
 * broadcast.
 */
export function cancelledJobsWithdrawn(store: JobStore): ResendGuard {
  return {
    sendAgain(op, send) {
      const jobId = op.context.jobId;
      if (typeof jobId !== "string") return send();
      return store.db.transaction(async (tx) =>
        (await store.lock(tx, jobId))?.status === "cancelled" ? ("withdrawn" as const) : send(),
      );
    },
  };
}
