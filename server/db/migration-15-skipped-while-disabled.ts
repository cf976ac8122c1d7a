/**
 * Migration 15: an endpoint disabled and enabled again before the cursor read what it took.
 *
 * On PGlite an endpoint takes the events written after it was last enabled (enabled_seq) and, while
 * disabled, those up to its disabling (disabled_seq): matched when the worker reads them past the
 * cursor. Enabling moved enabled_seq to the last event, so an event taken before a disable and not
 * yet read when the endpoint was enabled again (a round, 50 ms, or longer behind a backlog) was
 * taken by no rule and never delivered. Now an enabling with such events still ahead of the cursor
 * keeps enabled_seq and notes the events written while it was disabled as skipped instead; skipped
 * spans the cursor has passed are forgotten at the next enabling. The rule changes alike where it
 * is written (webhook_takes, and its inline copy in the cursor's round); the rest is as migration
 * 14 left it. PostgreSQL (no cursor: events are fanned out as they are written) keeps the old way.
 */
export const SKIPPED_WHILE_DISABLED_MIGRATION = {
  version: 15,
  name: "events taken before a disable stay taken across a quick enable",
  sql: `
    -- [[from, to], ...]: the events with from < seq <= to were written while the endpoint was
    -- disabled, and are not taken; null for none.
    ALTER TABLE webhook_endpoints ADD COLUMN skipped jsonb;
    -- Called only for an endpoint that has some (its subquery keeps it from being inlined).
    CREATE FUNCTION webhook_skipped(skipped jsonb, seq bigint) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
      SELECT EXISTS (
        SELECT 1 FROM jsonb_array_elements(skipped) AS s(span)
        WHERE seq > (s.span ->> 0)::bigint AND seq <= (s.span ->> 1)::bigint)
    $$;

    CREATE OR REPLACE FUNCTION webhook_endpoint_enabled() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      v_top bigint;
      v_cursor bigint;
    BEGIN
      IF TG_OP = 'INSERT' OR NEW.enabled IS DISTINCT FROM OLD.enabled THEN
        v_top := (SELECT coalesce(max(seq), 0) FROM webhook_events);
        IF NOT NEW.enabled THEN
          NEW.disabled_seq := v_top;
        ELSE
          v_cursor := (SELECT seq FROM webhook_cursor);
          IF TG_OP = 'INSERT' OR coalesce(current_setting('webhooks.handoff', true), '') <> 'cursor'
             OR OLD.disabled_seq IS NULL OR OLD.disabled_seq <= v_cursor THEN
            -- Everything it took was read (or fanned out): from here on.
            NEW.enabled_seq := v_top;
            NEW.skipped := NULL;
          ELSE
            -- It keeps taking what it took before the disable; what was written since is skipped.
            NEW.skipped := coalesce((
              SELECT jsonb_agg(s.span) FROM jsonb_array_elements(OLD.skipped) AS s(span)
              WHERE (s.span ->> 1)::bigint > v_cursor
            ), '[]'::jsonb) || jsonb_build_array(jsonb_build_array(OLD.disabled_seq, v_top));
          END IF;
        END IF;
      END IF;
      RETURN NEW;
    END
    $$;

    CREATE OR REPLACE FUNCTION webhook_takes(w webhook_endpoints, k access_keys, e webhook_events) RETURNS boolean
      LANGUAGE sql STABLE AS $$
      SELECT CASE WHEN e.type = 'webhook.test' THEN w.id = e.endpoint_id ELSE
        e.seq > w.enabled_seq AND (w.enabled OR e.seq <= w.disabled_seq) AND (w.skipped IS NULL OR NOT webhook_skipped(w.skipped, e.seq))
        AND w.events ? e.type
        AND (w.collections IS NULL OR (e.collection IS NOT NULL AND w.collections ? e.collection))
        AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet)
           OR (e.type = 'collection.transfer' AND w.wallets ?| ARRAY[lower(e.data ->> 'from'), lower(e.data ->> 'to')]))
        AND (w.access_key_id IS NULL OR (
          k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
          AND k.scopes ? (CASE WHEN e.type = 'wallet.low_balance' THEN 'wallets:read' ELSE 'nft:read' END)
          AND (e.access_key_id = k.id OR (
            (k.collections IS NULL OR e.collection IS NULL OR k.collections ? e.collection)
            AND (k.wallets IS NULL OR e.wallet IS NULL OR k.wallets ? e.wallet))))) END
    $$;

    CREATE OR REPLACE FUNCTION webhook_cursor_round(p jsonb) RETURNS json LANGUAGE plpgsql
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
            e.seq > w.enabled_seq AND (w.enabled OR e.seq <= w.disabled_seq) AND (w.skipped IS NULL OR NOT webhook_skipped(w.skipped, e.seq))
            AND w.events ? e.type
            AND (w.collections IS NULL OR (e.collection IS NOT NULL AND w.collections ? e.collection))
            AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet)
           OR (e.type = 'collection.transfer' AND w.wallets ?| ARRAY[lower(e.data ->> 'from'), lower(e.data ->> 'to')]))
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
  `,
};
