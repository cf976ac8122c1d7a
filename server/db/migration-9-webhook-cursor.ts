/**
 * Migration 9: on PGlite, deliveries that go well the first time leave no queue row.
 *
 * PGlite has one connection, so its events commit in the order of their seq, and a worker can read
 * them past a cursor exactly, match them to endpoints, and send them from memory: one read per
 * round instead of a queue row written three times per delivery (fan-out, claim, record), which
 * was most of what webhooks cost a write there. Only what the happy path cannot finish becomes a
 * queue row, served by the claim path as before: a failed attempt (with its retry time), an event
 * whose order key has one pending before it, one past what the worker keeps in memory, one for an
 * endpoint disabled since it was written. The cursor never passes a delivery that is not in the
 * log or the queue, so a crash loses nothing: the next process reads again what is past it.
 * PostgreSQL (several writers: seq order is not commit order) keeps the queue rows (via_cursor false).
 */
export const WEBHOOK_CURSOR_MIGRATION = {
  version: 9,
  name: "webhook cursor for PGlite's happy path",
  sql: `
    -- Written for the cursor, not fanned out: set by the writing session (PGlite's, at open), so an
    -- event is on exactly one of the two paths whoever wrote it.
    ALTER TABLE webhook_events ADD COLUMN via_cursor boolean NOT NULL DEFAULT false;
    ALTER TABLE webhook_events ALTER COLUMN via_cursor
      SET DEFAULT (coalesce(current_setting('webhooks.handoff', true), '') = 'cursor');
    -- Every event with via_cursor at or below seq is in the log or the queue (or went to no endpoint).
    CREATE TABLE webhook_cursor (
      one boolean PRIMARY KEY DEFAULT true CHECK (one),
      seq bigint NOT NULL
    );
    INSERT INTO webhook_cursor (seq) SELECT coalesce(max(seq), 0) FROM webhook_events;

    -- Which events an endpoint took when they were written, read later: those after it was last
    -- enabled (enabled_seq, the events' high-water mark then), and if it is disabled now, up to
    -- when it was (disabled_seq). Sequence positions, not times: exact on PGlite's one connection.
    ALTER TABLE webhook_endpoints ADD COLUMN enabled_seq bigint, ADD COLUMN disabled_seq bigint;
    UPDATE webhook_endpoints SET enabled_seq = (SELECT seq FROM webhook_cursor),
      disabled_seq = CASE WHEN enabled THEN NULL ELSE (SELECT seq FROM webhook_cursor) END;
    CREATE FUNCTION webhook_endpoint_enabled() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' OR NEW.enabled IS DISTINCT FROM OLD.enabled THEN
        IF NEW.enabled THEN
          NEW.enabled_seq := (SELECT coalesce(max(seq), 0) FROM webhook_events);
        ELSE
          NEW.disabled_seq := (SELECT coalesce(max(seq), 0) FROM webhook_events);
        END IF;
      END IF;
      RETURN NEW;
    END
    $$;
    CREATE TRIGGER webhook_endpoints_enabled BEFORE INSERT OR UPDATE OF enabled ON webhook_endpoints
      FOR EACH ROW EXECUTE FUNCTION webhook_endpoint_enabled();

    -- An operation event's snapshot: STABLE, as its body is (timestamps rendered in the session's
    -- time zone), so the planner inlines it into the trigger's INSERT; declared IMMUTABLE it was
    -- called once per event: about a quarter of what an endpoint adds to an operation's writes.
    ALTER FUNCTION webhook_operation_data(operations) STABLE;

    -- The fan-out (migration 8) leaves the cursor's events alone; in a session that writes for the
    -- cursor it is not even called (a call that inserts nothing cost up to a third of the insert).
    DROP TRIGGER webhook_events_fan_out ON webhook_events;
    CREATE TRIGGER webhook_events_fan_out AFTER INSERT ON webhook_events
      REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT
      WHEN (coalesce(current_setting('webhooks.handoff', true), '') <> 'cursor')
      EXECUTE FUNCTION webhook_fan_out();
    CREATE OR REPLACE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO webhook_deliveries (endpoint_id, event_seq, order_key, status)
      SELECT w.id, e.seq, w.id || ' ' || e.order_key, 'pending'
      FROM new_events e
      JOIN webhook_endpoints w ON CASE WHEN e.type = 'webhook.test' THEN w.id = e.endpoint_id ELSE
           w.enabled AND w.events ? e.type
           AND (w.collections IS NULL OR (e.collection IS NOT NULL AND w.collections ? e.collection))
           AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet)) END
      LEFT JOIN access_keys k ON k.id = w.access_key_id
      WHERE NOT e.via_cursor AND (e.type = 'webhook.test' OR w.access_key_id IS NULL OR (
        k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
        AND k.scopes ? (CASE WHEN e.type = 'wallet.low_balance' THEN 'wallets:read' ELSE 'nft:read' END)
        AND (e.access_key_id = k.id OR (
          (k.collections IS NULL OR e.collection IS NULL OR k.collections ? e.collection)
          AND (k.wallets IS NULL OR e.wallet IS NULL OR k.wallets ? e.wallet)))));
      RETURN NULL;
    END
    $$;

    -- The fan-out's rule for an event read past the cursor (k: the endpoint's key, NULL for the
    -- root's): webhook.test to its endpoint alone; else taken when written (enabled then), its type
    -- and filters, and its key reading it now. webhook_cursor_round has it inline (a call per
    -- event and endpoint cost more than the rest of its read).
    CREATE FUNCTION webhook_takes(w webhook_endpoints, k access_keys, e webhook_events) RETURNS boolean
      LANGUAGE sql STABLE AS $$
      SELECT CASE WHEN e.type = 'webhook.test' THEN w.id = e.endpoint_id ELSE
        e.seq > w.enabled_seq AND (w.enabled OR e.seq <= w.disabled_seq)
        AND w.events ? e.type
        AND (w.collections IS NULL OR (e.collection IS NOT NULL AND w.collections ? e.collection))
        AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet))
        AND (w.access_key_id IS NULL OR (
          k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
          AND k.scopes ? (CASE WHEN e.type = 'wallet.low_balance' THEN 'wallets:read' ELSE 'nft:read' END)
          AND (e.access_key_id = k.id OR (
            (k.collections IS NULL OR e.collection IS NULL OR k.collections ? e.collection)
            AND (k.wallets IS NULL OR e.wallet IS NULL OR k.wallets ? e.wallet))))) END
    $$;

    -- The cursor's part of a worker's round (OutboxStore.round, PGlite): the deliveries read
    -- earlier that are done with memory, p.logged (delivered, or failed for good) into the log, and
    -- p.queued into the queue: with an attempt's entry due after its retry delay; without one due
    -- now (behind an order key, past the memory, an endpoint disabled). Then the cursor moves to
    -- p.cursor. Then, when p.limit > 0, the next events past p.after, matched to the endpoints that
    -- take them; at or below p.recheck (what an earlier process may have read) one already in the
    -- log or the queue is left out. Answers {last: the last seq read, read: the deliveries,
    -- endpoints: their endpoints' fields by id}.
    -- Generic plans: with custom ones (its read's estimate depends on p.after and p.limit) every call
    -- was planned again, which cost more than running it.
    CREATE FUNCTION webhook_cursor_round(p jsonb) RETURNS json LANGUAGE plpgsql
      SET plan_cache_mode = force_generic_plan AS $$
    DECLARE
      v_last bigint;
      v_read json := '[]';
      v_endpoints json := '{}';
    BEGIN
      -- A delivery to an endpoint deleted meanwhile is dropped.
      IF jsonb_array_length(p -> 'logged') > 0 THEN
        INSERT INTO webhook_delivery_log (endpoint_id, event_seq, status, attempts, attempt_log, last_status,
                                          last_error, last_attempt_at, delivered_at, created_at)
        SELECT "endpointId", "eventSeq", CASE WHEN "delivered" THEN 'delivered' ELSE 'failed' END, 1,
               jsonb_build_array(entry), (entry ->> 'status')::integer, entry ->> 'error', now(),
               CASE WHEN "delivered" THEN now() END, "createdAt"
        FROM jsonb_to_recordset(p -> 'logged') AS r("endpointId" text, "eventSeq" bigint, "createdAt" timestamptz,
               "delivered" boolean, entry jsonb)
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = r."endpointId")
        ON CONFLICT DO NOTHING;
      END IF;
      IF jsonb_array_length(p -> 'queued') > 0 THEN
        INSERT INTO webhook_deliveries (endpoint_id, event_seq, order_key, status, attempts, attempt_log,
                                        last_status, last_error, last_attempt_at, next_attempt_at, retry_until,
                                        created_at)
        SELECT "endpointId", "eventSeq", "orderKey", 'pending', CASE WHEN entry IS NULL THEN 0 ELSE 1 END,
               CASE WHEN entry IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(entry) END,
               (entry ->> 'status')::integer, entry ->> 'error', CASE WHEN entry IS NOT NULL THEN now() END,
               now() + coalesce("retryMs", 0) * interval '1 millisecond',
               CASE WHEN entry IS NOT NULL THEN now() + "windowMs" * interval '1 millisecond' END, "createdAt"
        FROM jsonb_to_recordset(p -> 'queued') AS r("endpointId" text, "eventSeq" bigint, "orderKey" text,
               "createdAt" timestamptz, "retryMs" bigint, "windowMs" bigint, entry jsonb)
        WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = r."endpointId")
        ON CONFLICT DO NOTHING;
      END IF;
      IF p ? 'cursor' THEN
        UPDATE webhook_cursor SET seq = (p ->> 'cursor')::bigint WHERE seq < (p ->> 'cursor')::bigint;
      END IF;
      IF (p ->> 'limit')::integer > 0 THEN
        -- The events past p.after in seq order, the few written for the fan-out too (the read passes them).
        WITH ev AS MATERIALIZED (
          SELECT * FROM webhook_events e
          WHERE e.seq > (p ->> 'after')::bigint
          ORDER BY e.seq LIMIT (p ->> 'limit')::integer
        ), m AS MATERIALIZED (
          SELECT e.seq, e.id, e.type, e.data, e.created_at, e.collection, e.wallet, e.access_key_id,
                 w.id AS endpoint_id, w.enabled OR e.type = 'webhook.test' AS enabled,
                 w.id || ' ' || e.order_key AS order_key
          FROM ev e CROSS JOIN webhook_endpoints w LEFT JOIN access_keys k ON k.id = w.access_key_id
          -- webhook_takes(w, k, e), inline.
          WHERE e.via_cursor AND CASE WHEN e.type = 'webhook.test' THEN w.id = e.endpoint_id ELSE
            e.seq > w.enabled_seq AND (w.enabled OR e.seq <= w.disabled_seq)
            AND w.events ? e.type
            AND (w.collections IS NULL OR (e.collection IS NOT NULL AND w.collections ? e.collection))
            AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet))
            AND (w.access_key_id IS NULL OR (
              k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
              AND k.scopes ? (CASE WHEN e.type = 'wallet.low_balance' THEN 'wallets:read' ELSE 'nft:read' END)
              AND (e.access_key_id = k.id OR (
                (k.collections IS NULL OR e.collection IS NULL OR k.collections ? e.collection)
                AND (k.wallets IS NULL OR e.wallet IS NULL OR k.wallets ? e.wallet))))) END
            AND (e.seq > (p ->> 'recheck')::bigint OR (
              NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.event_seq = e.seq)
              AND NOT EXISTS (SELECT 1 FROM webhook_delivery_log l WHERE l.endpoint_id = w.id AND l.event_seq = e.seq)))
        )
        -- Each endpoint's fields once, not per delivery.
        SELECT (SELECT max(seq) FROM ev), coalesce((SELECT json_agg(json_build_object(
                 'endpoint_id', m.endpoint_id, 'event_seq', m.seq, 'event_id', m.id, 'type', m.type,
                 'data', m.data, 'event_created_at', m.created_at, 'collection', m.collection,
                 'wallet', m.wallet, 'operation_key_id', m.access_key_id, 'order_key', m.order_key,
                 'enabled', m.enabled,
                 -- An earlier delivery with its order key waits in the queue: this one goes behind it.
                 'behind', m.order_key IS NOT NULL AND EXISTS (
                   SELECT 1 FROM webhook_deliveries q WHERE q.order_key = m.order_key AND q.status = 'pending'))
                 ORDER BY m.seq) FROM m), '[]'),
               coalesce((SELECT json_object_agg(w.id, json_build_object('url', w.url,
                 'endpoint_key_id', w.access_key_id, 'secret', w.secret, 'previous_secret', w.previous_secret,
                 'previous_secret_until', w.previous_secret_until))
                 FROM webhook_endpoints w WHERE w.id IN (SELECT endpoint_id FROM m)), '{}')
        INTO v_last, v_read, v_endpoints;
      END IF;
      RETURN json_build_object('last', v_last, 'read', v_read, 'endpoints', v_endpoints);
    END
    $$;

    -- Whether an event was written past p_after: what an idle PGlite worker asks (the index's last entry).
    CREATE FUNCTION webhook_cursor_due(p_after bigint) RETURNS boolean LANGUAGE plpgsql STABLE AS $$
    BEGIN
      RETURN coalesce((SELECT max(seq) FROM webhook_events) > p_after, false);
    END
    $$;

    -- The delivery log shows the deliveries past the cursor too: pending and in flight (in a
    -- worker's memory, or about to be read).
    CREATE OR REPLACE VIEW webhook_delivery_records AS
      SELECT endpoint_id, event_seq, status, lease_owner, attempts, attempt_log, last_status, last_error,
             last_attempt_at, next_attempt_at, delivered_at, created_at
      FROM webhook_deliveries
      UNION ALL
      SELECT endpoint_id, event_seq, status, NULL, attempts, attempt_log, last_status, last_error,
             last_attempt_at, NULL, delivered_at, created_at
      FROM webhook_delivery_log
      UNION ALL
      SELECT w.id, e.seq, 'pending', 'cursor', 0, '[]'::jsonb, NULL::integer, NULL::text, NULL::timestamptz,
             e.created_at, NULL::timestamptz, e.created_at
      FROM webhook_events e CROSS JOIN webhook_endpoints w LEFT JOIN access_keys k ON k.id = w.access_key_id
      WHERE e.via_cursor AND e.seq > (SELECT c.seq FROM webhook_cursor c) AND webhook_takes(w, k, e)
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.event_seq = e.seq)
        AND NOT EXISTS (SELECT 1 FROM webhook_delivery_log l WHERE l.endpoint_id = w.id AND l.event_seq = e.seq);
  `,
};
