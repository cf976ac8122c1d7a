/**
 * Migration 10: an operation inserted with nothing to report no longer calls the webhook trigger.
 *
 * The engine inserts every write as queued, and an insert reports an event only for an operation
 * that starts sent, confirmed or failed. Migration 8's trigger on inserts ran per statement, with
 * the new rows as a transition table: with an endpoint enabled, every write's insert ran its
 * INSERT ... SELECT over them, which found nothing. On PGlite that is on the service's one thread,
 * about 0.03 ms per operation of what an endpoint adds to a write. A row trigger with a WHEN on the
 * row is not called at all for a queued operation, and no transition table is kept for it.
 * webhook_operation_events() keeps its branch for inserts, no longer called.
 */
export const OPERATION_INSERT_EVENTS_MIGRATION = {
  version: 10,
  name: "webhook events of inserted operations from a row trigger",
  sql: `
    DROP TRIGGER operations_webhook_inserted ON operations;
    CREATE FUNCTION webhook_operation_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_events (id, type, data, collection, wallet, operation_id, access_key_id, order_key)
      SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), 'operation.' || NEW.status,
             webhook_operation_data(NEW),
             CASE WHEN NEW.operation = 'deploy' THEN NULL ELSE lower(NEW.contract_address) END,
             lower(NEW.from_address), NEW.id, NEW.access_key_id, 'operation:' || NEW.id
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND events ? ('operation.' || NEW.status));
      RETURN NULL;
    END
    $$;
    CREATE TRIGGER operations_webhook_inserted AFTER INSERT ON operations FOR EACH ROW
      WHEN (NEW.status IN ('sent', 'confirmed', 'failed') AND NEW.operation <> 'nonceFill')
      EXECUTE FUNCTION webhook_operation_inserted();
  `,
};
