/**
 * Migration 11: collection.transfer reports every transfer that is news, also when the index reads
 * it as a backfill.
 *
 * The transfers-final hook skipped every range read far below the head (more than LIVE_WINDOW
 * blocks behind), to leave out a collection's history when it is first indexed. A service down
 * for longer than that catches up the same way, so the transfers mined meanwhile were never
 * reported. Now each collection keeps where news begins: its final block when the index first
 * followed the head. Transfers made final above it are reported however they were read; those at
 * or below it are history.
 */
export const TRANSFER_NEWS_MIGRATION = {
  version: 11,
  name: "where each collection's news begins",
  sql: `
    ALTER TABLE indexed_collections ADD COLUMN news_from bigint;
    -- A collection already followed near the head (within the 64 blocks of the live window of the
    -- newest block hash the index stored): its news begins where it is final now.
    UPDATE indexed_collections c SET news_from = c.final_block
    WHERE c.final_block IS NOT NULL
      AND c.indexed_block >= (SELECT max(b.number) FROM index_blocks b WHERE b.chain_id = c.chain_id) - 64;
  `,
};
