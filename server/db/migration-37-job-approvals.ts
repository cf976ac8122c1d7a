/**
 * Migration 37: a job held for approval. A job whose rows its key's approval rule would hold is
 * made `awaiting_approval` (the runner claims only running jobs) beside one `approvals` row naming
 * the job (`job_id`) instead of an operation; approving it makes it running, rejecting or expiry
 * cancels it. `jobs.approval_id` is that approval, shown with the job.
 */
export const JOB_APPROVALS_MIGRATION = {
  version: 37,
  name: "approvals of jobs",
  sql: `
    ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_status_check;
    ALTER TABLE jobs ADD CONSTRAINT jobs_status_check
      CHECK (status IN ('awaiting_approval', 'running', 'paused', 'completed', 'failed', 'cancelled'));
    ALTER TABLE jobs ADD COLUMN approval_id text;
    ALTER TABLE approvals ALTER COLUMN operation_id DROP NOT NULL;
    ALTER TABLE approvals ADD COLUMN job_id text UNIQUE;
    ALTER TABLE approvals ADD CONSTRAINT approvals_held_check CHECK ((operation_id IS NULL) <> (job_id IS NULL));
  `,
};
