-- Records attempts made under p_owner's leases (p_attempts: JSON rows {endpointId, eventSeq,
-- delivered, final, retryMs, windowMs, entry}). One that ends its delivery (delivered; final: a
-- 410, an endpoint that no longer takes the event; or past its retry window) moves the row to the
-- log; any other leaves it due again after retryMs. A delivery whose lease p_owner lost is left
-- alone. Answers [{endpointId, eventSeq, status}] of those recorded.
CREATE OR REPLACE FUNCTION webhook_record(p_owner text, p_attempts jsonb) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  recorded json;
BEGIN
  -- Each row found through the primary key, then changed by its ctid: joined on their columns,
  -- the planner (which guesses 100 attempts) scanned the whole table.
  WITH a AS MATERIALIZED (
    SELECT a.*, x.ctid AS tid,
           a."delivered" OR a."final"
             OR now() >= coalesce(x.retry_until, now() + a."windowMs" * interval '1 millisecond') AS ends
    FROM jsonb_to_recordset(p_attempts) AS a("endpointId" text, "eventSeq" bigint, "delivered" boolean,
           "final" boolean, "retryMs" bigint, "windowMs" bigint, entry jsonb)
    JOIN LATERAL (SELECT x.ctid, x.retry_until FROM webhook_deliveries x
                  WHERE x.endpoint_id = a."endpointId" AND x.event_seq = a."eventSeq" AND x.lease_owner = p_owner
                  OFFSET 0) x ON true
  ), ended AS (
    DELETE FROM webhook_deliveries d USING a
    WHERE d.ctid = ANY (ARRAY(SELECT tid FROM a WHERE ends)) AND d.ctid = a.tid AND d.lease_owner = p_owner
    RETURNING d.endpoint_id, d.event_seq, d.attempts, d.attempt_log, d.created_at, a."delivered", a.entry
  ), logged AS (
    INSERT INTO webhook_delivery_log (endpoint_id, event_seq, status, attempts, attempt_log, last_status,
                                      last_error, last_attempt_at, delivered_at, created_at)
    SELECT endpoint_id, event_seq, CASE WHEN "delivered" THEN 'delivered' ELSE 'failed' END, attempts + 1,
           attempt_log || jsonb_build_array(entry), (entry ->> 'status')::integer, entry ->> 'error', now(),
           CASE WHEN "delivered" THEN now() END, created_at
    FROM ended
    RETURNING endpoint_id AS "endpointId", event_seq AS "eventSeq", status
  ), retried AS (
    UPDATE webhook_deliveries d SET
      next_attempt_at = now() + a."retryMs" * interval '1 millisecond',
      retry_until = coalesce(d.retry_until, now() + a."windowMs" * interval '1 millisecond'),
      attempts = d.attempts + 1,
      attempt_log = d.attempt_log || jsonb_build_array(a.entry),
      last_status = (a.entry ->> 'status')::integer,
      last_error = a.entry ->> 'error',
      last_attempt_at = now(),
      lease_owner = NULL
    FROM a
    WHERE d.ctid = ANY (ARRAY(SELECT tid FROM a WHERE NOT ends)) AND d.ctid = a.tid AND d.lease_owner = p_owner
    RETURNING d.endpoint_id AS "endpointId", d.event_seq AS "eventSeq", d.status
  )
  SELECT coalesce(json_agg(x), '[]') INTO recorded
  FROM (SELECT * FROM logged UNION ALL SELECT * FROM retried) x;
  RETURN recorded;
END
$$;
