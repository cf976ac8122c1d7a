/**
 * Migration 21: GET /nft/operations, newest first, keyset-paged on (created_at, id). Each filter
 * has an index that yields its newest rows in order, so the first page reads `limit` rows whatever
 * the table holds (bench/operations-list.ts). Unsettled and failed operations are few beside the
 * confirmed ones: a partial index keeps `?status=` of those from walking every confirmed row. A
 * limited key's list is the union of what it made (by access key), what its wallets or collections
 * did (the from and contract indexes, one walk per address), and, for a key limited to collections,
 * the deployments and nonce fills, which name none (a small partial index).
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
    CREATE INDEX operations_list_key_idx ON operations (chain_id, access_key_id, created_at DESC, id DESC);
    CREATE INDEX operations_list_no_collection_idx ON operations (chain_id, created_at DESC, id DESC)
      WHERE operation = 'deploy' OR contract_address IS NULL;
  `,
};
