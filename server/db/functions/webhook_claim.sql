-- A worker's claim: leases due deliveries to p_owner for p_lease_ms (next_attempt_at moves to the
-- lease's end: a process that dies mid-attempt leaves them due again). Per endpoint at most its
-- free slots (p_slots {endpointId: free}, else p_per_endpoint), so one endpoint's backlog never
-- takes another's turn; at most p_max in all; never a delivery while an earlier one with its order
-- key (endpoint and operation) is pending; a disabled endpoint's wait (but its webhook.test).
-- Each comes with `taken`: whether its endpoint takes the event now (webhook_takes), checked again
-- before the attempt, so a key revoked since the fan-out stops its endpoint's deliveries.
CREATE OR REPLACE FUNCTION webhook_claim(p_owner text, p_lease_ms bigint, p_slots jsonb, p_per_endpoint integer,
                                         p_max integer) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  claimed json;
BEGIN
  WITH picked AS (
    SELECT ranked.tid FROM (
      SELECT c.tid, coalesce((p_slots ->> w.id)::integer, p_per_endpoint) AS free,
             row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at) AS rank
      FROM webhook_endpoints w
      -- Per endpoint, its first due deliveries (an index scan that stops at the first rows).
      CROSS JOIN LATERAL (
        SELECT x.ctid AS tid, x.endpoint_id, x.next_attempt_at
        FROM webhook_deliveries x
        WHERE x.endpoint_id = w.id AND x.status = 'pending' AND x.next_attempt_at <= now()
          AND (w.enabled OR (SELECT ev.type FROM webhook_events ev WHERE ev.seq = x.event_seq) = 'webhook.test')
          AND (x.order_key IS NULL OR x.event_seq = (
            SELECT min(p.event_seq) FROM webhook_deliveries p WHERE p.order_key = x.order_key AND p.status = 'pending'))
        ORDER BY x.next_attempt_at
        LIMIT p_per_endpoint
        FOR UPDATE OF x SKIP LOCKED
      ) c
    ) ranked
    WHERE ranked.rank <= ranked.free
    LIMIT p_max
  ), leased AS (
    -- Locked above: a row another process claimed meanwhile was rechecked then, and left out.
    UPDATE webhook_deliveries d
    SET lease_owner = p_owner, next_attempt_at = now() + p_lease_ms * interval '1 millisecond'
    WHERE d.ctid = ANY (ARRAY(SELECT tid FROM picked))
    RETURNING d.endpoint_id, d.event_seq, d.attempts
  )
  SELECT coalesce(json_agg(json_build_object(
           'endpointId', l.endpoint_id, 'eventSeq', l.event_seq, 'attempts', l.attempts, 'eventId', e.id,
           'type', e.type, 'data', e.data, 'eventCreatedAt', e.created_at, 'url', w.url, 'secret', w.secret,
           'previousSecrets', w.previous_secret, 'taken', coalesce(webhook_takes(w, k, e), false))), '[]')
  INTO claimed
  FROM leased l
  JOIN webhook_events e ON e.seq = l.event_seq
  JOIN webhook_endpoints w ON w.id = l.endpoint_id
  LEFT JOIN access_keys k ON k.id = w.access_key_id;
  RETURN claimed;
END
$$;
