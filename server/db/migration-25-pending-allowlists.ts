/**
 * Migration 25: a collection keeps an allowlist per root (issue 47, item 6). The one in force is
 * the one whose operation confirmed last (proofs are always those of the root on chain); those whose
 * operation is not confirmed yet wait beside it as pending, and the follower's confirmation, not the
 * request, makes one active. `seen_block`: the head when a list was PUT whose root was already on
 * chain (no transaction, so no block of its own).
 */
export const PENDING_ALLOWLISTS_MIGRATION = {
  version: 25,
  name: "allowlists by root: the active one beside pending ones",
  sql: `
    ALTER TABLE allowlists ADD COLUMN seen_block bigint;
    -- Lists kept before this migration were answered as in force: they stay so.
    UPDATE allowlists SET seen_block = 0 WHERE operation_id IS NULL;
    ALTER TABLE allowlists DROP CONSTRAINT allowlists_pkey;
    ALTER TABLE allowlists ADD PRIMARY KEY (chain_id, address, root);
    CREATE INDEX allowlists_operation_idx ON allowlists (operation_id);
    ALTER TABLE allowlist_entries ADD COLUMN root text;
    UPDATE allowlist_entries e SET root = a.root FROM allowlists a
      WHERE a.chain_id = e.chain_id AND a.address = e.address;
    ALTER TABLE allowlist_entries ALTER COLUMN root SET NOT NULL;
    ALTER TABLE allowlist_entries DROP CONSTRAINT allowlist_entries_pkey;
    ALTER TABLE allowlist_entries ADD PRIMARY KEY (chain_id, address, root, account);
  `,
};
