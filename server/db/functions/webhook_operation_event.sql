-- The event a change of an operation reports, from the row before it (o; NULL for an insert) and
-- after it (n): its type, and what the outbox keeps of it. No row when it reports none, or while
-- no enabled endpoint takes its type. To add an operation event, add its rule to the CASE below
-- and its name to EVENT_TYPES (server/webhooks/events.ts).
CREATE OR REPLACE FUNCTION webhook_operation_event(o operations, n operations)
  RETURNS TABLE (type text, data jsonb, collection text, wallet text, operation_id text, access_key_id text,
                 order_key text)
  LANGUAGE sql STABLE AS $$
  SELECT t.kind, webhook_operation_data(n),
         CASE WHEN n.operation = 'deploy' THEN NULL ELSE lower(n.contract_address) END,
         lower(n.from_address), n.id, n.access_key_id, 'operation:' || n.id
  FROM (SELECT CASE
          WHEN n.operation = 'nonceFill' THEN NULL -- the service's own gap fillers: nobody asked for them
          WHEN o.id IS NULL THEN
            CASE WHEN n.status IN ('sent', 'confirmed', 'failed') THEN 'operation.' || n.status END
          -- A reorg removed its receipt (the engine counts it in reorgs): reported before it is
          -- confirmed again, in the transaction that sends it back.
          WHEN n.reorgs > o.reorgs THEN 'operation.reorged'
          WHEN n.status IS DISTINCT FROM o.status THEN
            CASE WHEN n.status IN ('confirmed', 'failed') OR (n.status = 'sent' AND o.status = 'queued')
                 THEN 'operation.' || n.status END
          -- A new transaction the node took (a fee bump, a re-sign), while sent.
          WHEN n.status = 'sent' AND webhook_sent_count(n.transactions) > webhook_sent_count(o.transactions)
            THEN 'operation.replaced'
        END AS kind) t
  WHERE t.kind IS NOT NULL AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.enabled AND w.events ? t.kind)
$$;
