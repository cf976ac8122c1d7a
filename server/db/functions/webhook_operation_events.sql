-- Operation events, written in the transaction that changes the operation, one INSERT per
-- statement (the engine writes in batches): what webhook_operation_event says each change reports.
CREATE OR REPLACE FUNCTION webhook_operation_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO webhook_events (id, type, data, collection, wallet, operation_id, access_key_id, order_key)
    SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), e.*
    FROM new_rows n CROSS JOIN LATERAL webhook_operation_event(NULL, n) e;
  ELSE
    INSERT INTO webhook_events (id, type, data, collection, wallet, operation_id, access_key_id, order_key)
    SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), e.*
    FROM old_rows o JOIN new_rows n ON n.id = o.id CROSS JOIN LATERAL webhook_operation_event(o, n) e;
  END IF;
  RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER operations_webhook_inserted AFTER INSERT ON operations
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_operation_events();
CREATE OR REPLACE TRIGGER operations_webhook_updated AFTER UPDATE ON operations
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_operation_events();
