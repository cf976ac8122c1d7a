/**
 * Migration 36: approvals. A key may carry an approval rule (`access_keys.approval`): a write of
 * that key matching it is held, simulated and unsigned, as an operation `awaiting_approval` (no
 * nonce, final: the follower never claims it) beside an `approvals` row a person decides on.
 * The decision is a conditional UPDATE of that row, so one decision wins across instances.
 */
export const APPROVALS_MIGRATION = {
  version: 36,
  name: "approvals",
  sql: `
    ALTER TABLE access_keys ADD COLUMN approval jsonb;
    ALTER TABLE operations DROP CONSTRAINT IF EXISTS operations_status_check;
    ALTER TABLE operations ADD CONSTRAINT operations_status_check
      CHECK (status IN ('queued', 'sent', 'confirmed', 'failed', 'awaiting_approval'));
    CREATE TABLE approvals (
      id                text PRIMARY KEY,
      operation_id      text NOT NULL UNIQUE,
      chain_id          text NOT NULL,
      from_address      text NOT NULL,
      -- The collection acted on (lower case); NULL for a deployment.
      collection        text,
      status            text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired')),
      plan              jsonb NOT NULL,
      requested_by      text NOT NULL,
      requested_by_name text NOT NULL,
      decided_by        text,
      decided_by_name   text,
      reason            text,
      decided_at        timestamptz,
      expires_at        timestamptz NOT NULL,
      created_at        timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX approvals_listed_idx ON approvals (status, created_at DESC, id DESC);
    CREATE INDEX approvals_expiring_idx ON approvals (expires_at) WHERE status = 'pending';
  `,
};
