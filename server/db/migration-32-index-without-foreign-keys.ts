/**
 * Migration 32: index_transfers and index_tokens lose their foreign key to indexed_collections.
 * Its check runs once per row, and a backfill writes a row in each table per Transfer log: on
 * PostgreSQL it was a third of writing 100,000 logs (as migration 23 found for allowlist entries
 * on PGlite). The store writes these rows only for a collection it holds a lease on, locked in the
 * same transaction; forgetChain deletes them with their collections.
 */
export const INDEX_WITHOUT_FOREIGN_KEYS_MIGRATION = {
  version: 32,
  name: "index transfers and tokens without foreign keys",
  sql: `
    ALTER TABLE index_transfers DROP CONSTRAINT index_transfers_collection_id_fkey;
    ALTER TABLE index_tokens DROP CONSTRAINT index_tokens_collection_id_fkey;
  `,
};
