/**
 * Migration 34: the index of ERC-1155 editions (API.md, "Editions"). A collection keeps its
 * standard (read once by ERC-165); an edition contract's TransferSingle and TransferBatch logs are
 * stored one row per id moved, with amounts, beside the counts that keep reads flat at any supply:
 * each (edition, holder)'s balance, each edition's supply and holders, and each holder's total.
 * Like index_transfers and index_tokens (migration 32), no foreign keys on the per-log tables.
 */
export const EDITIONS_INDEX_MIGRATION = {
  version: 34,
  name: "editions index",
  sql: `
    ALTER TABLE indexed_collections ADD COLUMN standard text;   -- erc721 | erc1155; NULL until read
    -- An edition contract's supply is a sum of amounts, which a bigint need not hold.
    ALTER TABLE indexed_collections ALTER COLUMN supply TYPE numeric(78, 0);
    -- One row per id a TransferSingle or TransferBatch moved (batch_index: its place in the batch).
    CREATE TABLE index_edition_transfers (
      collection_id    integer NOT NULL,
      block_number     bigint NOT NULL,
      log_index        integer NOT NULL,
      batch_index      integer NOT NULL,
      block_hash       text NOT NULL,
      transaction_hash text NOT NULL,
      from_address     text NOT NULL,
      to_address       text NOT NULL,
      token_id         numeric(78, 0) NOT NULL,
      amount           numeric(78, 0) NOT NULL,
      PRIMARY KEY (collection_id, block_number, log_index, batch_index)
    );
    CREATE INDEX index_edition_transfers_token_idx
      ON index_edition_transfers (collection_id, token_id, block_number, log_index, batch_index);
    -- Each edition's supply (held by an address other than zero), holders and first mint.
    CREATE TABLE index_editions (
      collection_id integer NOT NULL,
      token_id      numeric(78, 0) NOT NULL,
      supply        numeric(78, 0) NOT NULL,
      holders       bigint NOT NULL,
      minted_block  bigint,
      PRIMARY KEY (collection_id, token_id)
    );
    -- What each holder holds of each edition (never the zero address, never 0).
    CREATE TABLE index_edition_balances (
      collection_id integer NOT NULL,
      token_id      numeric(78, 0) NOT NULL,
      holder        text NOT NULL,
      amount        numeric(78, 0) NOT NULL,
      PRIMARY KEY (collection_id, token_id, holder)
    );
    CREATE INDEX index_edition_balances_rank_idx ON index_edition_balances (collection_id, token_id, amount DESC, holder);
    CREATE INDEX index_edition_balances_holder_idx ON index_edition_balances (collection_id, holder, token_id);
    -- What each holder holds of every edition together, and of how many editions.
    CREATE TABLE index_edition_holders (
      collection_id integer NOT NULL,
      holder        text NOT NULL,
      amount        numeric(78, 0) NOT NULL,
      editions      bigint NOT NULL,
      PRIMARY KEY (collection_id, holder)
    );
    CREATE INDEX index_edition_holders_rank_idx ON index_edition_holders (collection_id, amount DESC, holder);
  `,
};
