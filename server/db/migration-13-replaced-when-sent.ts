/**
 * Migration 13: operation.replaced only for a replacement the node took.
 *
 * The follower stores a fee bump's transaction before it broadcasts it (a crash in between must
 * not lose a transaction that may be mined), and took it out again when the node refused it. The
 * trigger wrote operation.replaced as soon as the operation's transactions grew, so a refused bump
 * was reported with a hash that never reached a mempool, once per refused try. The follower now
 * marks the replacement `unsent` until the node answers; the trigger counts the transactions
 * without the mark, so the event is written with the answer, and never for a refusal.
 */
export const REPLACED_WHEN_SENT_MIGRATION = {
  version: 13,
  name: "operation.replaced once the replacement was broadcast",
  sql: `
    -- How many of an operation's transactions were sent (not marked unsent).
    CREATE FUNCTION webhook_sent_count(transactions jsonb) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
      SELECT count(*)::integer FROM jsonb_array_elements(transactions) AS t(tx) WHERE NOT (t.tx ? 'unsent')
    $$;
    -- As migration 8 wrote it, but for the replaced rule, and without its branch for inserts: no
    -- trigger calls it on an insert since migration 10.
    CREATE OR REPLACE FUNCTION webhook_operation_events() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND events ?| ARRAY[
           'operation.sent', 'operation.replaced', 'operation.confirmed', 'operation.failed']) THEN
        RETURN NULL;
      END IF;
      INSERT INTO webhook_events (id, type, data, collection, wallet, operation_id, access_key_id, order_key)
      SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), c.kind, c.data, c.collection, c.wallet,
             c.id, c.access_key_id, 'operation:' || c.id
      FROM (SELECT n.id, n.access_key_id, webhook_operation_data(n) AS data,
                   CASE WHEN n.operation = 'deploy' THEN NULL ELSE lower(n.contract_address) END AS collection,
                   lower(n.from_address) AS wallet,
                   CASE WHEN n.status IS DISTINCT FROM o.status THEN
                          CASE WHEN n.status IN ('confirmed', 'failed') OR (n.status = 'sent' AND o.status = 'queued')
                               THEN 'operation.' || n.status END
                        WHEN n.status = 'sent'
                          AND webhook_sent_count(n.transactions) > webhook_sent_count(o.transactions)
                          THEN 'operation.replaced' END AS kind
            FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE n.operation <> 'nonceFill') c
      WHERE c.kind IS NOT NULL AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND events ? c.kind);
      RETURN NULL;
    END
    $$;
  `,
};
