/**
 * Migration 35: a job row's edition. An airdrop job on an ERC-1155 edition contract names, in each
 * row, the edition it mints (`tokenId`); duplicates are merged per edition and address, and each
 * batch holds one edition (NFTEditions.airdrop(id, recipients, amounts)). Null on an ERC-721
 * collection and for a whitelist. Decimal text, as amounts are.
 */
export const JOB_EDITION_ROWS_MIGRATION = {
  version: 35,
  name: "jobs: a row's edition",
  sql: `ALTER TABLE job_rows ADD COLUMN token_id text;`,
};
