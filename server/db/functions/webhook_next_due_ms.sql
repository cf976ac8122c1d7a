-- When the next delivery is due, in ms from now (leased ones at their lease's end); NULL when none
-- is pending. What an idle worker asks on each poll: the first row of each endpoint. PL/pgSQL, so
-- its plan is kept per connection.
CREATE OR REPLACE FUNCTION webhook_next_due_ms() RETURNS double precision LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN (SELECT extract(epoch FROM min(d.next_attempt_at) - now()) * 1000
          FROM webhook_endpoints w
          CROSS JOIN LATERAL (SELECT x.next_attempt_at FROM webhook_deliveries x
                              WHERE x.endpoint_id = w.id AND x.status = 'pending'
                              ORDER BY x.next_attempt_at LIMIT 1) d);
END
$$;
