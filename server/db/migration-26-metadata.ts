/**
 * Migration 26: hosted token metadata (API.md, "Metadata"). Each collection's uploaded documents in
 * their canonical bytes (RFC 8785) and its placeholder, whether they are frozen by a provenance
 * commit, and what the chain said of the reveal; and the ERC-4906 events of every indexed collection,
 * read with its Transfer logs and undone with them by a reorg (webhook `collection.metadata_updated`).
 */
export const METADATA_MIGRATION = {
  version: 26,
  name: "hosted metadata and ERC-4906 events in the index",
  sql: `
    CREATE TABLE metadata_collections (
      chain_id       text NOT NULL,
      address        text NOT NULL,          -- lower-case
      placeholder    text,                   -- canonical JSON; NULL = the default placeholder
      frozen         boolean NOT NULL DEFAULT false,
      provenance     text,                   -- 0x + 64 hex, set by the commit
      count          integer,                -- documents the provenance covers
      operation_id   text,                   -- the commit's operation
      starting_index numeric(78, 0),         -- read from the chain once revealed
      root_cid       text,                   -- the CAR's root, once built
      updated_at     timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, address)
    );
    CREATE TABLE metadata_documents (
      chain_id text NOT NULL,
      address  text NOT NULL,
      token_id bigint NOT NULL,
      document text NOT NULL,               -- canonical JSON (RFC 8785), served byte for byte
      PRIMARY KEY (chain_id, address, token_id)
    );
    CREATE TABLE index_metadata_updates (
      collection_id    integer NOT NULL REFERENCES indexed_collections (id) ON DELETE CASCADE,
      block_number     bigint NOT NULL,
      log_index        integer NOT NULL,
      block_hash       text NOT NULL,
      transaction_hash text NOT NULL,
      from_token_id    numeric(78, 0) NOT NULL,
      to_token_id      numeric(78, 0) NOT NULL,
      PRIMARY KEY (collection_id, block_number, log_index)
    );
  `,
};
