/**
 * Migration 19: the access key that registered each collection through POST /collections, so a key
 * registers at most MAX_COLLECTIONS_PER_KEY collections new to the index ("root" for the API_KEY).
 * Collections registered otherwise (deployed, named in /nft, configured) have none.
 */
export const COLLECTIONS_PER_KEY_MIGRATION = {
  version: 19,
  name: "the access key that registered each collection",
  sql: `
    ALTER TABLE indexed_collections ADD COLUMN registered_by_key text;
    CREATE INDEX indexed_collections_by_key_idx ON indexed_collections (registered_by_key)
      WHERE registered_by_key IS NOT NULL;
  `,
};
