/**
 * Migration 23: the index knows drops (API.md, "Drops"). The reference contract's AllowlistMinted
 * and VoucherRedeemed events, read with the Transfer logs of the same ranges and undone with them
 * by a reorg: an account's allowlist mints and a voucher's redemption are answered from here.
 *
 * And allowlist entries lose their foreign key to their allowlist: its check, one per row, was
 * 40% of writing 100,000 entries on PGlite (1.2 to 1.5 s). The store deletes a collection's
 * entries itself wherever it deletes its allowlist.
 */
export const DROP_INDEX_MIGRATION = {
  version: 23,
  name: "allowlist mints and voucher redemptions in the index",
  sql: `
    CREATE TABLE index_allowlist_mints (
      collection_id    integer NOT NULL REFERENCES indexed_collections (id) ON DELETE CASCADE,
      block_number     bigint NOT NULL,
      log_index        integer NOT NULL,
      block_hash       text NOT NULL,
      transaction_hash text NOT NULL,
      account          text NOT NULL,     -- lower-case
      amount           numeric(78, 0) NOT NULL,
      PRIMARY KEY (collection_id, block_number, log_index)
    );
    CREATE INDEX index_allowlist_mints_account_idx ON index_allowlist_mints (collection_id, account);
    CREATE TABLE index_voucher_redemptions (
      collection_id    integer NOT NULL REFERENCES indexed_collections (id) ON DELETE CASCADE,
      block_number     bigint NOT NULL,
      log_index        integer NOT NULL,
      block_hash       text NOT NULL,
      transaction_hash text NOT NULL,
      voucher_id       text NOT NULL,     -- bytes32, 0x + lower-case hex
      recipient        text NOT NULL,     -- lower-case
      amount           numeric(78, 0) NOT NULL,
      price            numeric(78, 0) NOT NULL,
      PRIMARY KEY (collection_id, block_number, log_index)
    );
    CREATE INDEX index_voucher_redemptions_id_idx ON index_voucher_redemptions (collection_id, voucher_id);
    ALTER TABLE allowlist_entries DROP CONSTRAINT allowlist_entries_chain_id_address_fkey;
  `,
};
