/**
 * Migration 17: one delivery path on both stores; the SQL functions leave the migrations.
 *
 * PGlite read new events past a cursor (migration 9) and PostgreSQL fanned them out into a queue.
 * Now both fan out: each event becomes one delivery row per endpoint that takes it, in the
 * transaction that writes it, and workers claim those rows. What only the cursor needed goes: its
 * table, the endpoints' enabled_seq, disabled_seq and skipped spans, webhook_events.via_cursor,
 * and the functions that read them. A store left by the cursor keeps what it had not delivered:
 * the deliveries past the cursor (those the delivery log showed pending, lease 'cursor') become
 * queue rows first, by the rule they were taken under.
 *
 * Every webhook function and trigger is dropped here and declared again, once, from
 * server/db/functions/*.sql, which the service applies after the migrations (functions.ts).
 */
export const ONE_DELIVERY_PATH_MIGRATION = {
  version: 17,
  name: "one delivery path: fanned-out deliveries on both stores",
  sql: `
    INSERT INTO webhook_deliveries (endpoint_id, event_seq, order_key, status, created_at)
    SELECT r.endpoint_id, r.event_seq, r.endpoint_id || ' ' || e.order_key, 'pending', r.created_at
    FROM webhook_delivery_records r JOIN webhook_events e ON e.seq = r.event_seq
    WHERE r.lease_owner = 'cursor'
    ON CONFLICT DO NOTHING;

    DROP VIEW webhook_delivery_records;
    DROP TRIGGER webhook_events_fan_out ON webhook_events;
    DROP TRIGGER webhook_endpoints_enabled ON webhook_endpoints;
    DROP TRIGGER operations_webhook_inserted ON operations;
    DROP TRIGGER operations_webhook_updated ON operations;
    DROP FUNCTION webhook_cursor_round(jsonb);
    DROP FUNCTION webhook_cursor_due(bigint);
    DROP FUNCTION webhook_takes(webhook_endpoints, access_keys, webhook_events);
    DROP FUNCTION webhook_skipped(jsonb, bigint);
    DROP FUNCTION webhook_endpoint_enabled();
    DROP FUNCTION webhook_fan_out();
    DROP FUNCTION webhook_round(text, bigint, jsonb, integer, integer, jsonb);
    DROP FUNCTION webhook_next_due_ms();
    DROP FUNCTION webhook_operation_inserted();
    DROP FUNCTION webhook_operation_events();
    DROP FUNCTION webhook_operation_data(operations);
    DROP FUNCTION webhook_sent_count(jsonb);
    DROP TABLE webhook_cursor;
    ALTER TABLE webhook_endpoints DROP COLUMN enabled_seq, DROP COLUMN disabled_seq, DROP COLUMN skipped;
    ALTER TABLE webhook_events DROP COLUMN via_cursor;

    -- Every delivery, pending or ended, as the delivery log (GET /webhooks/{id}/deliveries) shows it.
    CREATE VIEW webhook_delivery_records AS
      SELECT endpoint_id, event_seq, status, lease_owner, attempts, attempt_log, last_status, last_error,
             last_attempt_at, next_attempt_at, delivered_at, created_at
      FROM webhook_deliveries
      UNION ALL
      SELECT endpoint_id, event_seq, status, NULL, attempts, attempt_log, last_status, last_error,
             last_attempt_at, NULL, delivered_at, created_at
      FROM webhook_delivery_log;
  `,
};
