/**
 * Migration 24: one store for several chains (API.md, "Chains"). What was kept for "the" chain is
 * kept per chain, and what one chain's store held moves to that chain's id with nothing lost:
 * - wallet policies (dailySpendLimit, lowBalance and its crossing state) per (wallet, chain), `*`
 *   for every chain without its own; the wallets' one policy moves to the store's bound chain
 *   (the one chain_binding row last updated; `*` for a store that never bound one);
 * - a wallet's daily spend per chain; the days already counted move to that chain;
 * - a webhook event's chain: every event's data carries `chainId`, and the column is read from it
 *   (webhook.test, of no chain, has none); the events already written gain the bound chain's id;
 * - webhook endpoints and access keys may be limited to chains (`chains`: decimal ids; NULL = all);
 * - the operations list across every chain (GET /nft/operations without ?chain=) gets indexes that
 *   do not lead with chain_id.
 */
export const CHAINS_MIGRATION = {
  version: 24,
  name: "several chains in one store",
  sql: `
    CREATE TEMP TABLE migration_24_chain ON COMMIT DROP AS
      SELECT COALESCE((SELECT chain_id FROM chain_binding ORDER BY updated_at DESC, chain_id LIMIT 1),
                      (SELECT chain_id FROM operations GROUP BY chain_id ORDER BY count(*) DESC, chain_id LIMIT 1))
        AS chain_id;

    CREATE TABLE wallet_policies (
      address           text NOT NULL REFERENCES wallets (address) ON DELETE CASCADE,
      chain_id          text NOT NULL,          -- a decimal chain id, or '*': every chain without its own
      daily_spend_limit numeric(78, 0),
      low_balance       numeric(78, 0),
      below_low_balance boolean NOT NULL DEFAULT false,
      updated_at        timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (address, chain_id)
    );
    INSERT INTO wallet_policies (address, chain_id, daily_spend_limit, low_balance, below_low_balance)
      SELECT w.address, COALESCE((SELECT chain_id FROM migration_24_chain), '*'), w.daily_spend_limit,
             w.low_balance, w.below_low_balance
      FROM wallets w WHERE w.daily_spend_limit IS NOT NULL OR w.low_balance IS NOT NULL;
    -- Moved: the wallets' own columns are no longer read (kept, so that the migration only adds).
    UPDATE wallets SET daily_spend_limit = NULL, low_balance = NULL, below_low_balance = false
      WHERE daily_spend_limit IS NOT NULL OR low_balance IS NOT NULL;

    ALTER TABLE wallet_spend ADD COLUMN chain_id text;
    UPDATE wallet_spend SET chain_id = COALESCE((SELECT chain_id FROM migration_24_chain), '*');
    ALTER TABLE wallet_spend ALTER COLUMN chain_id SET NOT NULL;
    ALTER TABLE wallet_spend DROP CONSTRAINT wallet_spend_pkey;
    ALTER TABLE wallet_spend ADD PRIMARY KEY (address, chain_id, day);

    UPDATE webhook_events SET data = data || jsonb_build_object('chainId', (SELECT chain_id FROM migration_24_chain))
      WHERE type <> 'webhook.test' AND NOT data ? 'chainId' AND (SELECT chain_id FROM migration_24_chain) IS NOT NULL;
    ALTER TABLE webhook_events ADD COLUMN chain_id text GENERATED ALWAYS AS (data ->> 'chainId') STORED;
    CREATE INDEX webhook_events_chain_idx ON webhook_events (chain_id, seq);

    ALTER TABLE webhook_endpoints ADD COLUMN chains jsonb;
    ALTER TABLE access_keys ADD COLUMN chains jsonb;

    CREATE INDEX operations_all_list_idx ON operations (created_at DESC, id DESC);
    CREATE INDEX operations_all_list_from_idx ON operations (from_address, created_at DESC, id DESC);
    CREATE INDEX operations_all_list_contract_idx ON operations (contract_address, created_at DESC, id DESC);
  `,
};
