-- Fan-out: each event written becomes one delivery per endpoint that takes it, in the statement
-- (and so the transaction) that writes it. An endpoint committed after that never gets it.
CREATE OR REPLACE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, event_seq, order_key, status)
  SELECT w.id, e.seq, w.id || ' ' || e.order_key, 'pending'
  FROM new_events e CROSS JOIN webhook_endpoints w LEFT JOIN access_keys k ON k.id = w.access_key_id
  WHERE webhook_takes(w, k, e);
  RETURN NULL;
END
$$;
CREATE OR REPLACE TRIGGER webhook_events_fan_out AFTER INSERT ON webhook_events
  REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION webhook_fan_out();
