/**
 * Migration 31: which door a job came in by, as migration 29 records it for an operation. `via` is
 * "mcp" for a job an MCP tool made (create_job, an airdrop too large for one transaction); the runner
 * passes it on to each batch's operation, so GET /nft/operations shows them "via":"mcp" too.
 */
export const JOB_VIA_MIGRATION = {
  version: 31,
  name: "jobs: via",
  sql: `ALTER TABLE jobs ADD COLUMN via text;`,
};
