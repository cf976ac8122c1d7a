/**
 * Migration 22: jobs (API.md, "Jobs"). A job is a list planned into batches, each sent as one
 * operation of the engine; rows take their state from their batch (pending, sent, confirmed,
 * failed), so sending a batch writes one row, not hundreds.
 * - jobs: what was asked and where it stands; seq orders the list.
 * - job_batches: the plan, fixed at creation; `sending` is claimed by a process (lease_owner until
 *   lease_until) that has not yet recorded its operation; `sent` has its operation.
 * - job_rows: one per distinct address (duplicates merged), with the input row it first came from,
 *   its token ids (airdrop) or state (whitelist) once its batch is confirmed.
 */
export const JOBS_MIGRATION = {
  version: 22,
  name: "jobs",
  sql: `
    CREATE TABLE jobs (
      id                 text PRIMARY KEY,
      seq                bigserial UNIQUE,
      kind               text NOT NULL CHECK (kind IN ('airdrop', 'whitelist')),
      chain_id           text NOT NULL,
      contract_address   text NOT NULL,
      from_address       text NOT NULL,
      status             text NOT NULL CHECK (status IN ('running', 'paused', 'completed', 'failed', 'cancelled')),
      error              jsonb,
      row_count          integer NOT NULL,
      batch_count        integer NOT NULL,
      estimated_gas      text NOT NULL,
      estimated_cost_wei text NOT NULL,
      access_key_id      text,
      created_at         timestamptz NOT NULL DEFAULT now(),
      updated_at         timestamptz NOT NULL DEFAULT now(),
      finished_at        timestamptz
    );
    CREATE INDEX jobs_status_idx ON jobs (status);
    CREATE TABLE job_batches (
      job_id       text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
      idx          integer NOT NULL,
      first_row    integer NOT NULL,
      row_count    integer NOT NULL,
      status       text NOT NULL CHECK (status IN ('pending', 'sending', 'sent', 'confirmed', 'failed', 'cancelled')),
      operation_id text,
      lease_owner  text,
      lease_until  timestamptz,
      gas_used     text,
      wei_spent    text,
      error        jsonb,
      PRIMARY KEY (job_id, idx)
    );
    CREATE INDEX job_batches_open_idx ON job_batches (job_id, status) WHERE status IN ('pending', 'sending', 'sent');
    CREATE TABLE job_rows (
      job_id    text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
      n         integer NOT NULL,
      line      integer NOT NULL,
      address   text NOT NULL,
      amount    text,
      batch     integer NOT NULL,
      token_ids jsonb,
      state     text,
      PRIMARY KEY (job_id, n)
    );
  `,
};
