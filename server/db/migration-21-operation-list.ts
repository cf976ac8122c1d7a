/**
 * Migration 21: GET /nft/operations, newest first, keyset-paged on (created_at, id). Each filter
 * has an index that yields its newest rows in order, so the first page reads `limit` rows whatever
 * the table holds (bench/operations-list.ts). Unsettled and failed operations are few beside the
 * confirmed ones: a partial index keeps `?status=` of those from walking every confirmed row.
 */
export const OPERATION_LIST_MIGRATION = {
  version: 21,
  name: "indexes of the operations list",
  sql: `
    CREATE INDEX operations_list_idx ON operations (chain_id, created_at DESC, id DESC);
    CREATE INDEX operations_list_from_idx ON operations (chain_id, from_address, created_at DESC, id DESC);
    CREATE INDEX operations_list_contract_idx ON operations (chain_id, contract_address, created_at DESC, id DESC);
    CREATE INDEX operations_list_unconfirmed_idx ON operations (chain_id, status, created_at DESC, id DESC)
      WHERE status <> 'confirmed';
  `,
};
