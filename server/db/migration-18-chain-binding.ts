/**
 * Migration 18: the store remembers the chain it works with (API.md, "Runtime shape").
 *
 * Operations, nonces, idempotency keys and the index are facts about one chain. A store started
 * against another chain with the same id (a local node restarted, another network behind the same
 * URL) would replay answers from a chain that no longer exists. Each chain id the store has worked
 * with keeps its genesis hash and one block deep enough that no reorg the index undoes reaches it
 * (the anchor); a start checks both against the chain before anything else reads the store.
 */
export const CHAIN_BINDING_MIGRATION = {
  version: 18,
  name: "the store remembers its chain's blocks",
  sql: `
    CREATE TABLE chain_binding (
      chain_id      text PRIMARY KEY,
      genesis_hash  text NOT NULL,
      anchor_number bigint NOT NULL,   -- a block beyond reorg reach when it was recorded
      anchor_hash   text NOT NULL,
      bound_at      timestamptz NOT NULL DEFAULT now(),
      updated_at    timestamptz NOT NULL DEFAULT now()
    );
  `,
};
