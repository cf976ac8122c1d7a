/**
 * Migration 16: what the follower needs to survive a restart and a reorg, kept in the row rather
 * than in a process's memory.
 * - pending_since_at: the wall time of the resend clock (pending_since is its block). A node that
 *   mines nothing while a gap holds every write back never moves the block clock; this one still runs.
 * - final: the operation's block is final (or it has none: abandoned, a no-op). Until then a
 *   confirmed or failed operation is still followed, so that a reorg that removes its receipt sends it
 *   back to sent.
 * - reorgs: how many times a reorg undid it.
 */
export const FINALITY_MIGRATION = {
  version: 16,
  name: "operations followed until final",
  sql: `
    ALTER TABLE operations
      ADD COLUMN pending_since_at timestamptz,
      ADD COLUMN final boolean NOT NULL DEFAULT false,
      ADD COLUMN reorgs integer NOT NULL DEFAULT 0;
    -- What earlier code finished is taken as final: it was followed to CONFIRMATIONS, as promised then.
    UPDATE operations SET final = true WHERE status IN ('confirmed', 'failed');
    CREATE INDEX operations_unfinal_idx ON operations (chain_id, created_at) WHERE NOT final;
  `,
};
