/**
 * Migration 20: allowlists (API.md, "Drops"). Each collection's current Merkle tree, whole, so a
 * proof is read from the store at any size: one row per tree with its nodes (32 bytes each, in
 * @openzeppelin/merkle-tree's order), stored uncompressed out of line (EXTERNAL) so that reading a
 * proof's 17 nodes of a 100,000-entry tree fetches those bytes only; and one row per entry with its
 * leaf's place in the tree. And the vouchers the service signed, so that one's state (unused, used,
 * expired) can be answered by its id.
 */
export const ALLOWLISTS_MIGRATION = {
  version: 20,
  name: "allowlists (Merkle trees and their entries) and vouchers",
  sql: `
    CREATE TABLE allowlists (
      chain_id     text NOT NULL,
      address      text NOT NULL,         -- the collection, lower-case
      root         text NOT NULL,
      entries      integer NOT NULL,
      nodes        bytea NOT NULL,
      operation_id text,                  -- the setAllowlist operation; NULL when the root was already set
      created_at   timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, address)
    );
    ALTER TABLE allowlists ALTER COLUMN nodes SET STORAGE EXTERNAL;
    CREATE TABLE allowlist_entries (
      chain_id   text NOT NULL,
      address    text NOT NULL,
      account    text NOT NULL,           -- lower-case
      allowance  numeric(78, 0) NOT NULL,
      price      numeric(78, 0) NOT NULL,
      tree_index integer NOT NULL,
      PRIMARY KEY (chain_id, address, account),
      FOREIGN KEY (chain_id, address) REFERENCES allowlists (chain_id, address) ON DELETE CASCADE
    );
    CREATE TABLE vouchers (
      chain_id      text NOT NULL,
      address       text NOT NULL,        -- the collection, lower-case
      id            text NOT NULL,        -- bytes32, 0x + lower-case hex
      recipient     text NOT NULL,        -- the voucher's "to"
      amount        numeric(78, 0) NOT NULL,
      price         numeric(78, 0) NOT NULL,
      valid_until   bigint NOT NULL,      -- unix seconds
      signer        text NOT NULL,
      signed_block  bigint NOT NULL,      -- the chain's head when it was signed: its redemption is later
      created_at    timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (chain_id, address, id)
    );
  `,
};
