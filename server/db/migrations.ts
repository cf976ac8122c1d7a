import type { SqlDriver } from "./driver";
import { OPERATION_INSERT_EVENTS_MIGRATION } from "./migration-10-operation-insert-events";
import { WEBHOOK_CURSOR_MIGRATION } from "./migration-9-webhook-cursor";
import { TRANSFER_NEWS_MIGRATION } from "./migration-11-transfer-news";
import { PREVIOUS_SECRETS_MIGRATION } from "./migration-12-previous-secrets";
import { REPLACED_WHEN_SENT_MIGRATION } from "./migration-13-replaced-when-sent";
import { TRANSFER_WALLET_FILTER_MIGRATION } from "./migration-14-transfer-wallet-filter";
import { SKIPPED_WHILE_DISABLED_MIGRATION } from "./migration-15-skipped-while-disabled";
import { FINALITY_MIGRATION } from "./migration-16-finality";
import { COLLECTIONS_PER_KEY_MIGRATION } from "./migration-19-collections-per-key";
import { OPERATION_LIST_MIGRATION } from "./migration-21-operation-list";
import { ONE_DELIVERY_PATH_MIGRATION } from "./migration-17-one-delivery-path";
import { applyFunctions } from "./functions";
import { ALLOWLISTS_MIGRATION } from "./migration-20-allowlists";
import { PENDING_ALLOWLISTS_MIGRATION } from "./migration-25-pending-allowlists";
import { CHAIN_BINDING_MIGRATION } from "./migration-18-chain-binding";
import { JOBS_MIGRATION } from "./migration-22-jobs";
import { DROP_INDEX_MIGRATION } from "./migration-23-drop-index";
import { CHAINS_MIGRATION } from "./migration-24-chains";
import { METADATA_MIGRATION } from "./migration-26-metadata";
import { OPERATION_VIA_MIGRATION } from "./migration-29-operation-via";
import { JOB_VIA_MIGRATION } from "./migration-31-job-via";
import { INDEX_WITHOUT_FOREIGN_KEYS_MIGRATION } from "./migration-32-index-without-foreign-keys";
import { ONE_OPERATION_PER_TRANSACTION_MIGRATION } from "./migration-33-one-operation-per-transaction";
import { EDITIONS_INDEX_MIGRATION } from "./migration-34-editions-index";
import { JOB_EDITION_ROWS_MIGRATION } from "./migration-35-job-edition-rows";
import { APPROVALS_MIGRATION } from "./migration-36-approvals";
import { JOB_APPROVALS_MIGRATION } from "./migration-37-job-approvals";

/** The schema, in order. Applied ones are recorded in schema_migrations; never edit one, add another. */
export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: "users and sessions",
    sql: `
      CREATE SEQUENCE user_id_seq;
      CREATE TABLE users (
        username      text PRIMARY KEY,
        -- Petstore's id is a client-chosen int64 label, not the key: paths name users by username.
        id            bigint NOT NULL DEFAULT nextval('user_id_seq'),
        first_name    text,
        last_name     text,
        email         text,
        phone         text,
        user_status   integer,
        password_hash text,
        created_at    timestamptz NOT NULL DEFAULT now(),
        updated_at    timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE sessions (
        token_hash text PRIMARY KEY, -- sha-256 of the token: a copy of the table cannot log anyone in
        username   text NOT NULL REFERENCES users (username) ON UPDATE CASCADE ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX sessions_expires_at_idx ON sessions (expires_at);
      CREATE INDEX sessions_username_idx ON sessions (username);
    `,
  },
  {
    version: 2,
    name: "operations and nonces",
    sql: `
      -- Every write the service sends, recorded before its transaction is broadcast. Never a key.
      CREATE TABLE operations (
        id               text PRIMARY KEY,
        chain_id         text NOT NULL,
        from_address     text NOT NULL,
        operation        text NOT NULL,
        contract_address text,
        fingerprint      text NOT NULL,
        idempotency_key  text,
        status           text NOT NULL CHECK (status IN ('queued', 'sent', 'confirmed', 'failed')),
        nonce            bigint,
        -- The call itself, so the follower can re-sign it (fee bump) without the request.
        tx_to            text,
        tx_data          text,
        tx_value         text,
        gas_limit        text,
        -- Every signed transaction, oldest first: {hash, raw, fees}. Raw transactions are public once sent.
        transactions     jsonb NOT NULL DEFAULT '[]',
        context          jsonb NOT NULL DEFAULT '{}',
        result           jsonb,
        error            jsonb,
        -- The answer a confirmed or failed operation gave, byte for byte, for Idempotency-Key replays.
        response_status  integer,
        response_body    text,
        block_number     bigint,
        block_hash       text,
        -- Chain head when the current transaction was first seen unmined: the resend clock.
        pending_since    bigint,
        lease_owner      text,
        lease_until      timestamptz,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX operations_idempotency_idx ON operations (chain_id, from_address, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE INDEX operations_unfinished_idx ON operations (created_at) WHERE status IN ('queued', 'sent');
      -- The next nonce of each (chain, address), shared by every process on the database.
      CREATE TABLE nonces (
        chain_id   text NOT NULL,
        address    text NOT NULL,
        next_nonce bigint NOT NULL,
        PRIMARY KEY (chain_id, address)
      );
      -- Nonces whose transaction was never broadcast: handed out again before new ones, or filled.
      CREATE TABLE recycled_nonces (
        chain_id    text NOT NULL,
        address     text NOT NULL,
        nonce       bigint NOT NULL,
        recycled_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (chain_id, address, nonce)
      );
    `,
  },
  {
    version: 3,
    name: "rate limit counters",
    sql: `
      -- Abuse counters (login failures, user creations) shared by every instance on a PostgreSQL
      -- server (on PGlite, one process's, they stay in memory; the table exists there too).
      -- The layout of rate-limiter-flexible's RateLimiterPostgres, which inserts by position: keep
      -- these three columns, in this order. key = "<counter>:<client address>[|<username>]".
      CREATE TABLE rate_limit_counters (
        key    text PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint -- end of the counter's window, ms since the epoch
      );
      CREATE INDEX rate_limit_counters_expire_idx ON rate_limit_counters (expire);
    `,
  },
  {
    version: 4,
    name: "access keys and audit events",
    sql: `
      -- Keys made through /access-keys. Only a SHA-256 of each secret: a copy of the table unlocks nothing.
      CREATE TABLE access_keys (
        id           text PRIMARY KEY,
        name         text NOT NULL,
        secret_hash  text NOT NULL UNIQUE,
        scopes       jsonb NOT NULL,
        wallets      jsonb,            -- lower-case addresses; NULL = every wallet
        collections  jsonb,            -- lower-case addresses; NULL = every collection
        expires_at   timestamptz,
        created_by   text,             -- the key that made it; NULL = the root key (API_KEY)
        created_at   timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at   timestamptz
      );
      -- Every change to keys, wallets, webhooks and policies: what, by which key, from where. Never a secret.
      CREATE TABLE audit_events (
        id             bigserial PRIMARY KEY,
        at             timestamptz NOT NULL DEFAULT now(),
        action         text NOT NULL,
        target_type    text NOT NULL,
        target_id      text NOT NULL,
        details        jsonb NOT NULL DEFAULT '{}',
        actor_key_id   text,
        actor_name     text NOT NULL,
        client_address text NOT NULL
      );
      -- The access key that made each operation (NULL: the root key, or a request key in open mode).
      ALTER TABLE operations ADD COLUMN access_key_id text;
    `,
  },
  {
    version: 5,
    name: "wallets",
    sql: `
      -- Keys the service holds (API.md, "Wallets"). Never a plaintext key: a local key is sealed with
      -- AES-256-GCM under WALLET_MASTER_KEY, its address bound as associated data; a pkcs11 key stays in
      -- its token, named here by its label.
      CREATE TABLE wallets (
        address           text PRIMARY KEY,            -- checksummed
        label             text NOT NULL UNIQUE,
        kind              text NOT NULL CHECK (kind IN ('local', 'pkcs11')),
        key_ciphertext    bytea,
        key_nonce         bytea,
        key_tag           bytea,
        pkcs11_key_label  text,
        daily_spend_limit numeric(78, 0),              -- wei of value + gas at the signed max fee, per UTC day
        low_balance       numeric(78, 0),              -- wei; the wallet.low_balance webhook fires below it
        -- Whether the balance was last seen below low_balance: the webhook fires once per crossing.
        below_low_balance boolean NOT NULL DEFAULT false,
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now(),
        CHECK (
          (kind = 'local' AND key_ciphertext IS NOT NULL AND key_nonce IS NOT NULL AND key_tag IS NOT NULL
            AND pkcs11_key_label IS NULL)
          OR (kind = 'pkcs11' AND pkcs11_key_label IS NOT NULL AND key_ciphertext IS NULL AND key_nonce IS NULL
            AND key_tag IS NULL)
        )
      );
      -- One row: a constant sealed under the master key, so a start with the wrong key is refused
      -- before any wallet is used, and an instance with a rotated-out key cannot seal new wallets.
      CREATE TABLE wallet_master_key (
        singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        check_ciphertext bytea NOT NULL,
        check_nonce      bytea NOT NULL,
        check_tag        bytea NOT NULL,
        updated_at       timestamptz NOT NULL DEFAULT now()
      );
      -- What each wallet has committed to spend per UTC day, reserved before a write is signed.
      CREATE TABLE wallet_spend (
        address text NOT NULL REFERENCES wallets (address) ON DELETE CASCADE,
        day     date NOT NULL,
        spent   numeric(78, 0) NOT NULL DEFAULT 0,
        PRIMARY KEY (address, day)
      );
    `,
  },
  {
    version: 6,
    name: "collections index",
    sql: `
      -- Every collection the index follows. indexed_block: the block the index reflects (all its
      -- Transfer logs up to there are applied); final_block: up to where they are CONFIRMATIONS deep
      -- and handed to the transfers-final hook. One process at a time indexes a collection: the
      -- holder of its lease (taken with FOR UPDATE SKIP LOCKED, renewed, left to run out).
      CREATE TABLE indexed_collections (
        id             serial PRIMARY KEY,
        chain_id       text NOT NULL,
        address        text NOT NULL,      -- lower-case
        deployed_block bigint,             -- NULL: not known yet (the indexer looks it up)
        indexed_block  bigint,             -- NULL until deployed_block is known; then deployed_block - 1 and up
        final_block    bigint,
        name           text,
        symbol         text,
        supply         bigint NOT NULL DEFAULT 0,  -- tokens held by an address other than zero
        holders        bigint NOT NULL DEFAULT 0,
        registered_by  text NOT NULL,      -- deploy | request | api | config
        lease_owner    text,
        lease_until    timestamptz,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now(),
        UNIQUE (chain_id, address)
      );
      -- Hashes of the recent blocks the index read, to notice a reorg and find where it forked.
      CREATE TABLE index_blocks (
        chain_id    text NOT NULL,
        number      bigint NOT NULL,
        hash        text NOT NULL,
        parent_hash text NOT NULL,
        PRIMARY KEY (chain_id, number)
      );
      -- Every Transfer log of an indexed collection; a log is stored once (a block number and a log
      -- index name one log of a chain; a reorg deletes what it removed before the new branch is read).
      CREATE TABLE index_transfers (
        collection_id    integer NOT NULL REFERENCES indexed_collections (id) ON DELETE CASCADE,
        block_number     bigint NOT NULL,
        log_index        integer NOT NULL,
        block_hash       text NOT NULL,
        transaction_hash text NOT NULL,
        from_address     text NOT NULL,
        to_address       text NOT NULL,
        token_id         numeric(78, 0) NOT NULL,
        PRIMARY KEY (collection_id, block_number, log_index)
      );
      CREATE INDEX index_transfers_token_idx ON index_transfers (collection_id, token_id, block_number, log_index);
      -- Each token's owner now (the zero address once burned).
      CREATE TABLE index_tokens (
        collection_id integer NOT NULL REFERENCES indexed_collections (id) ON DELETE CASCADE,
        token_id      numeric(78, 0) NOT NULL,
        owner         text NOT NULL,
        minted_block  bigint,
        PRIMARY KEY (collection_id, token_id)
      );
      CREATE INDEX index_tokens_owner_idx ON index_tokens (collection_id, owner, token_id);
      -- How many tokens each holder holds (never the zero address, never 0).
      CREATE TABLE index_holders (
        collection_id integer NOT NULL REFERENCES indexed_collections (id) ON DELETE CASCADE,
        owner         text NOT NULL,
        tokens        bigint NOT NULL,
        PRIMARY KEY (collection_id, owner)
      );
      CREATE INDEX index_holders_rank_idx ON index_holders (collection_id, tokens DESC, owner);
    `,
  },
  {
    version: 7,
    name: "webhooks",
    sql: `
      -- Webhook endpoints (/webhooks). The secret signs deliveries, so it is kept (never listed or logged).
      CREATE TABLE webhook_endpoints (
        id                    text PRIMARY KEY,
        url                   text NOT NULL,
        events                jsonb NOT NULL,   -- event types it receives
        collections           jsonb,            -- lower-case addresses; NULL = every collection
        wallets               jsonb,            -- lower-case addresses; NULL = every wallet
        secret                text NOT NULL,
        -- After a rotation the old secret signs beside the new one until previous_secret_until.
        previous_secret       text,
        previous_secret_until timestamptz,
        enabled               boolean NOT NULL DEFAULT true,
        disabled_reason       text,
        -- The access key that made it: it receives only what that key could read. NULL = the root key.
        access_key_id         text,
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now()
      );
      -- The outbox: each event is written in the transaction of the change it reports.
      CREATE TABLE webhook_events (
        seq           bigserial PRIMARY KEY,
        id            text NOT NULL,         -- webhook-id, the same on every retry (122 random bits: no index kept)
        type          text NOT NULL,
        data          jsonb NOT NULL,        -- operation events: a snapshot of the row, rendered when sent
        collection    text,
        wallet        text,
        operation_id  text,
        access_key_id text,                  -- the key that made the operation reported
        order_key     text,                  -- events with one key reach an endpoint in seq order
        endpoint_id   text,                  -- set for webhook.test: that endpoint alone
        fanned_out    boolean NOT NULL DEFAULT false,
        created_at    timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX webhook_events_fan_out_idx ON webhook_events (seq) WHERE NOT fanned_out;
      CREATE INDEX webhook_events_unfanned_idx ON webhook_events (order_key, seq) WHERE NOT fanned_out;
      -- One row per (endpoint, event). A claim pushes next_attempt_at forward by the lease: a
      -- process that dies mid-attempt leaves the row due again when the lease runs out.
      CREATE TABLE webhook_deliveries (
        endpoint_id     text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_seq       bigint NOT NULL REFERENCES webhook_events (seq) ON DELETE CASCADE,
        order_key       text,             -- endpoint id and the event's order key: one queue per pair
        status          text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts        integer NOT NULL DEFAULT 0,
        attempt_log     jsonb NOT NULL DEFAULT '[]',
        last_status     integer,
        last_error      text,
        last_attempt_at timestamptz,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        -- Retries go on until this, then the delivery fails (24 h after the first try; a manual retry restarts it).
        retry_until     timestamptz,
        lease_owner     text,
        delivered_at    timestamptz,
        created_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (endpoint_id, event_seq)
      );
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at)
        WHERE status = 'pending';
      CREATE INDEX webhook_deliveries_order_idx ON webhook_deliveries (order_key, event_seq)
        WHERE status = 'pending' AND order_key IS NOT NULL;
      CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (endpoint_id, event_seq);

      -- Operation events, written by the database in the very transaction that changes the
      -- operation: queued -> sent, a new transaction while sent (replaced), -> confirmed, -> failed.
      -- Nothing is written while no enabled endpoint takes the event type.
      CREATE FUNCTION webhook_operation_event() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        kind text;
      BEGIN
        IF NEW.operation = 'nonceFill' THEN
          RETURN NULL; -- the service's own gap fillers: nobody asked for them
        END IF;
        IF TG_OP = 'INSERT' THEN
          IF NEW.status IN ('sent', 'confirmed', 'failed') THEN
            kind := 'operation.' || NEW.status;
          END IF;
        ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
          IF NEW.status IN ('confirmed', 'failed') OR (NEW.status = 'sent' AND OLD.status = 'queued') THEN
            kind := 'operation.' || NEW.status;
          END IF;
        ELSIF NEW.status = 'sent'
          AND jsonb_array_length(NEW.transactions) > jsonb_array_length(OLD.transactions) THEN
          kind := 'operation.replaced';
        END IF;
        IF kind IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND events ? kind) THEN
          RETURN NULL;
        END IF;
        INSERT INTO webhook_events (id, type, data, collection, wallet, operation_id, access_key_id, order_key)
        VALUES (
          'evt_' || replace(gen_random_uuid()::text, '-', ''),
          kind,
          jsonb_build_object(
            'id', NEW.id,
            'operation', NEW.operation,
            'status', NEW.status,
            'from', NEW.from_address,
            'contractAddress', NEW.contract_address,
            'nonce', NEW.nonce,
            'transactions', NEW.transactions, -- signed transactions are public once sent; the view keeps their hashes
            'blockNumber', NEW.block_number,
            'result', NEW.result,
            'error', NEW.error,
            'createdAt', NEW.created_at,
            'updatedAt', NEW.updated_at
          ),
          CASE WHEN NEW.operation = 'deploy' THEN NULL ELSE lower(NEW.contract_address) END,
          lower(NEW.from_address),
          NEW.id,
          NEW.access_key_id,
          'operation:' || NEW.id
        );
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER operations_webhook_events AFTER INSERT OR UPDATE OF status, transactions ON operations
        FOR EACH ROW EXECUTE FUNCTION webhook_operation_event();
    `,
  },
  {
    version: 8,
    name: "webhook fan-out at write, cached delivery plans",
    sql: `
      -- Events are fanned out into deliveries by the statement that writes them (a trigger), not
      -- by a later worker round; the rounds' statements live in functions, whose plans PostgreSQL
      -- keeps per connection: planning the round's query cost ten times its execution on PGlite.

      -- What an earlier version wrote and had not fanned out yet, fanned out now (its rule, once).
      INSERT INTO webhook_deliveries (endpoint_id, event_seq, order_key, status)
      SELECT w.id, e.seq, w.id || ' ' || e.order_key, 'pending'
      FROM webhook_events e
      JOIN webhook_endpoints w ON CASE WHEN e.type = 'webhook.test' THEN w.id = e.endpoint_id ELSE
           w.enabled AND w.created_at <= e.created_at AND w.events ? e.type
           AND (w.collections IS NULL OR (e.collection IS NOT NULL AND w.collections ? e.collection))
           AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet)) END
      LEFT JOIN access_keys k ON k.id = w.access_key_id
      WHERE NOT e.fanned_out AND (e.type = 'webhook.test' OR w.access_key_id IS NULL OR (
        k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
        AND k.scopes ? (CASE WHEN e.type = 'wallet.low_balance' THEN 'wallets:read' ELSE 'nft:read' END)
        AND (e.access_key_id = k.id OR (
          (k.collections IS NULL OR e.collection IS NULL OR k.collections ? e.collection)
          AND (k.wallets IS NULL OR e.wallet IS NULL OR k.wallets ? e.wallet)))))
      ON CONFLICT DO NOTHING;
      DROP INDEX webhook_events_fan_out_idx;
      DROP INDEX webhook_events_unfanned_idx;
      ALTER TABLE webhook_events DROP COLUMN fanned_out;
      -- The primary key (endpoint_id, event_seq) serves the delivery log.
      DROP INDEX webhook_deliveries_log_idx;
      -- No foreign keys: each checked insert locked the endpoint's row (FOR KEY SHARE), one lock and
      -- a write per delivery, on the writes' path. Deleting an endpoint deletes its deliveries, and
      -- pruning an event its log (WebhookEndpointStore.delete, OutboxStore.prune).
      ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
      ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_seq_fkey;
      -- The queue and the log apart: webhook_deliveries keeps the pending deliveries alone (a small
      -- table rewritten by every claim and record, so vacuumed often and cheaply: PGlite has no
      -- autovacuum and the worker vacuums it, and a claim's scan walks every dead row it left);
      -- a delivery that ends (delivered, or failed for good) moves to webhook_delivery_log,
      -- written once. A manual retry moves it back.
      CREATE TABLE webhook_delivery_log (
        endpoint_id     text NOT NULL,
        event_seq       bigint NOT NULL,
        status          text NOT NULL CHECK (status IN ('delivered', 'failed')),
        attempts        integer NOT NULL,
        attempt_log     jsonb NOT NULL,
        last_status     integer,
        last_error      text,
        last_attempt_at timestamptz,
        delivered_at    timestamptz,
        created_at      timestamptz NOT NULL,
        PRIMARY KEY (endpoint_id, event_seq)
      );
      INSERT INTO webhook_delivery_log
      SELECT endpoint_id, event_seq, status, attempts, attempt_log, last_status, last_error, last_attempt_at,
             delivered_at, created_at
      FROM webhook_deliveries WHERE status <> 'pending';
      DELETE FROM webhook_deliveries WHERE status <> 'pending';
      ALTER TABLE webhook_deliveries SET (autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 200);
      -- Every delivery, pending or ended, as the delivery log (GET /webhooks/{id}/deliveries) shows it.
      CREATE VIEW webhook_delivery_records AS
        SELECT endpoint_id, event_seq, status, lease_owner, attempts, attempt_log, last_status, last_error,
               last_attempt_at, next_attempt_at, delivered_at, created_at
        FROM webhook_deliveries
        UNION ALL
        SELECT endpoint_id, event_seq, status, NULL, attempts, attempt_log, last_status, last_error,
               last_attempt_at, NULL, delivered_at, created_at
        FROM webhook_delivery_log;

      -- Fan-out: each event written becomes one delivery per endpoint that takes it (its type; its
      -- collection and wallet filters; enabled) and whose key could read it (held, unexpired, with
      -- the read scope of the event's type, and the event's collection and wallet within its
      -- limits, or the key made the operation itself); the root key's endpoints (no key) read
      -- everything. The same rule as readableBy(), which each attempt checks again. webhook.test
      -- goes to its endpoint alone. Endpoints committed after the event's statement never get it.
      CREATE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO webhook_deliveries (endpoint_id, event_seq, order_key, status)
        SELECT w.id, e.seq, w.id || ' ' || e.order_key, 'pending'
        FROM new_events e
        JOIN webhook_endpoints w ON CASE WHEN e.type = 'webhook.test' THEN w.id = e.endpoint_id ELSE
             w.enabled AND w.events ? e.type
             AND (w.collections IS NULL OR (e.collection IS NOT NULL AND w.collections ? e.collection))
             AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet)) END
        LEFT JOIN access_keys k ON k.id = w.access_key_id
        WHERE e.type = 'webhook.test' OR w.access_key_id IS NULL OR (
          k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
          AND k.scopes ? (CASE WHEN e.type = 'wallet.low_balance' THEN 'wallets:read' ELSE 'nft:read' END)
          AND (e.access_key_id = k.id OR (
            (k.collections IS NULL OR e.collection IS NULL OR k.collections ? e.collection)
            AND (k.wallets IS NULL OR e.wallet IS NULL OR k.wallets ? e.wallet))));
        RETURN NULL;
      END
      $$;
      CREATE TRIGGER webhook_events_fan_out AFTER INSERT ON webhook_events
        REFERENCING NEW TABLE AS new_events FOR EACH STATEMENT EXECUTE FUNCTION webhook_fan_out();

      -- Operation events, one INSERT per statement that changes operations (the engine writes them
      -- in batches): queued -> sent, a new transaction while sent (replaced), -> confirmed, -> failed.
      -- Nothing is written while no enabled endpoint takes the event type.
      DROP TRIGGER operations_webhook_events ON operations;
      DROP FUNCTION webhook_operation_event();
      CREATE FUNCTION webhook_operation_events() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND events ?| ARRAY[
             'operation.sent', 'operation.replaced', 'operation.confirmed', 'operation.failed']) THEN
          RETURN NULL;
        END IF;
        IF TG_OP = 'INSERT' THEN
          INSERT INTO webhook_events (id, type, data, collection, wallet, operation_id, access_key_id, order_key)
          SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), c.kind, c.data, c.collection, c.wallet,
                 c.id, c.access_key_id, 'operation:' || c.id
          FROM (SELECT n.id, n.access_key_id, 'operation.' || n.status AS kind, webhook_operation_data(n) AS data,
                       CASE WHEN n.operation = 'deploy' THEN NULL ELSE lower(n.contract_address) END AS collection,
                       lower(n.from_address) AS wallet
                FROM new_rows n
                WHERE n.operation <> 'nonceFill' AND n.status IN ('sent', 'confirmed', 'failed')) c
          WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND events ? c.kind);
        ELSE
          INSERT INTO webhook_events (id, type, data, collection, wallet, operation_id, access_key_id, order_key)
          SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), c.kind, c.data, c.collection, c.wallet,
                 c.id, c.access_key_id, 'operation:' || c.id
          FROM (SELECT n.id, n.access_key_id, webhook_operation_data(n) AS data,
                       CASE WHEN n.operation = 'deploy' THEN NULL ELSE lower(n.contract_address) END AS collection,
                       lower(n.from_address) AS wallet,
                       CASE WHEN n.status IS DISTINCT FROM o.status THEN
                              CASE WHEN n.status IN ('confirmed', 'failed') OR (n.status = 'sent' AND o.status = 'queued')
                                   THEN 'operation.' || n.status END
                            WHEN n.status = 'sent'
                              AND jsonb_array_length(n.transactions) > jsonb_array_length(o.transactions)
                              THEN 'operation.replaced' END AS kind
                FROM new_rows n JOIN old_rows o ON o.id = n.id
                WHERE n.operation <> 'nonceFill') c
          WHERE c.kind IS NOT NULL AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled AND events ? c.kind);
        END IF;
        RETURN NULL;
      END
      $$;
      -- An operation event's data: a snapshot of the row, rendered as GET /nft/operations/{id} when sent.
      CREATE FUNCTION webhook_operation_data(o operations) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
        SELECT jsonb_build_object(
          'id', o.id, 'operation', o.operation, 'status', o.status, 'from', o.from_address,
          'contractAddress', o.contract_address, 'nonce', o.nonce,
          'transactions', o.transactions, -- signed transactions are public once sent; the view keeps their hashes
          'blockNumber', o.block_number, 'result', o.result, 'error', o.error,
          'createdAt', o.created_at, 'updatedAt', o.updated_at)
      $$;
      CREATE TRIGGER operations_webhook_inserted AFTER INSERT ON operations
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_operation_events();
      CREATE TRIGGER operations_webhook_updated AFTER UPDATE ON operations
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION webhook_operation_events();

      -- A worker's round (OutboxStore.round): records the attempts it finished (p_attempts: JSON
      -- rows {endpointId, eventSeq, delivered, final, retryMs, windowMs, entry}), each delivered,
      -- failed (final, or past its retry window) or due again after its retry delay, leaving alone
      -- a delivery whose lease p_owner lost; then leases due deliveries to p_owner for p_lease_ms:
      -- per endpoint at most its free slots (p_slots {endpointId: free}, else p_per_endpoint), so
      -- one endpoint's backlog never takes another's turn; at most p_max in all; never a delivery
      -- while an earlier one with its order key is pending. Answers {recorded, claimed}.
      CREATE FUNCTION webhook_round(p_owner text, p_lease_ms bigint, p_slots jsonb, p_per_endpoint integer,
                                    p_max integer, p_attempts jsonb) RETURNS json LANGUAGE plpgsql AS $$
      DECLARE
        recorded json := '[]';
        claimed json := '[]';
      BEGIN
        IF jsonb_array_length(p_attempts) > 0 THEN
          -- Each attempt's row found through the primary key, then changed by its ctid: joined on
          -- their columns, the planner (which guesses 100 attempts) scanned the whole table. An
          -- attempt that ends its delivery (delivered; final; past its retry window) moves the row to
          -- the log; any other leaves it due again after its retry delay.
          WITH a AS MATERIALIZED (
            SELECT a.*, x.ctid AS tid,
                   a."delivered" OR a."final"
                     OR now() >= coalesce(x.retry_until, now() + a."windowMs" * interval '1 millisecond') AS ends
            FROM jsonb_to_recordset(p_attempts) AS a("endpointId" text, "eventSeq" bigint, "delivered" boolean,
                   "final" boolean, "retryMs" bigint, "windowMs" bigint, entry jsonb)
            JOIN LATERAL (SELECT x.ctid, x.retry_until FROM webhook_deliveries x
                          WHERE x.endpoint_id = a."endpointId" AND x.event_seq = a."eventSeq"
                            AND x.lease_owner = p_owner
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
            RETURNING endpoint_id, event_seq, status
          ), r AS (
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
            WHERE d.ctid = ANY (ARRAY(SELECT tid FROM a WHERE NOT ends)) AND d.ctid = a.tid
              AND d.lease_owner = p_owner
            RETURNING d.endpoint_id, d.event_seq, d.status
          )
          SELECT coalesce(json_agg(x), '[]') INTO recorded
          FROM (SELECT * FROM logged UNION ALL SELECT * FROM r) x;
        END IF;
        IF p_max > 0 THEN
          WITH picked AS (
            SELECT ranked.tid FROM (
              SELECT c.tid, c.endpoint_id, coalesce((p_slots ->> w.id)::integer, p_per_endpoint) AS free,
                     row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at) AS rank
              FROM webhook_endpoints w
              -- Per endpoint, its first due deliveries (an index scan): one endpoint's backlog is
              -- never in another's way, and the scan stops at the first rows, whatever the table's size.
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
            -- The rows are locked (FOR UPDATE above): one another process claimed meanwhile was
            -- rechecked then, and left out as not due any more. Updated by ctid: joined on their
            -- columns, the planner scanned the whole delivery log.
            UPDATE webhook_deliveries d
            SET lease_owner = p_owner, next_attempt_at = now() + p_lease_ms * interval '1 millisecond'
            WHERE d.ctid = ANY (ARRAY(SELECT tid FROM picked))
            RETURNING d.endpoint_id, d.event_seq, d.attempts, d.created_at
          )
          SELECT coalesce(json_agg(json_build_object(
                   'endpoint_id', l.endpoint_id, 'event_seq', l.event_seq, 'attempts', l.attempts,
                   'created_at', l.created_at, 'event_id', e.id, 'type', e.type, 'data', e.data,
                   'event_created_at', e.created_at, 'collection', e.collection, 'wallet', e.wallet,
                   'operation_key_id', e.access_key_id, 'url', w.url, 'endpoint_key_id', w.access_key_id,
                   'secret', w.secret, 'previous_secret', w.previous_secret,
                   'previous_secret_until', w.previous_secret_until)), '[]')
          INTO claimed
          FROM leased l
          JOIN webhook_events e ON e.seq = l.event_seq
          JOIN webhook_endpoints w ON w.id = l.endpoint_id;
        END IF;
        RETURN json_build_object('recorded', recorded, 'claimed', claimed);
      END
      $$;

      -- When the next delivery is due, in ms from now (leased ones at their lease's end); NULL when
      -- none is pending. What an idle worker asks on each poll: the first row of each endpoint.
      CREATE FUNCTION webhook_next_due_ms() RETURNS double precision LANGUAGE plpgsql STABLE AS $$
      BEGIN
        RETURN (SELECT extract(epoch FROM min(d.next_attempt_at) - now()) * 1000
                FROM webhook_endpoints w
                CROSS JOIN LATERAL (SELECT x.next_attempt_at FROM webhook_deliveries x
                                    WHERE x.endpoint_id = w.id AND x.status = 'pending'
                                    ORDER BY x.next_attempt_at LIMIT 1) d);
      END
      $$;
    `,
  },
  WEBHOOK_CURSOR_MIGRATION,
  OPERATION_INSERT_EVENTS_MIGRATION,
  TRANSFER_NEWS_MIGRATION,
  PREVIOUS_SECRETS_MIGRATION,
  REPLACED_WHEN_SENT_MIGRATION,
  TRANSFER_WALLET_FILTER_MIGRATION,
  SKIPPED_WHILE_DISABLED_MIGRATION,
  FINALITY_MIGRATION,
  ONE_DELIVERY_PATH_MIGRATION,
  CHAIN_BINDING_MIGRATION,
  COLLECTIONS_PER_KEY_MIGRATION,
  ALLOWLISTS_MIGRATION,
  OPERATION_LIST_MIGRATION,
  JOBS_MIGRATION,
  DROP_INDEX_MIGRATION,
  CHAINS_MIGRATION,
  PENDING_ALLOWLISTS_MIGRATION,
  METADATA_MIGRATION,
  OPERATION_VIA_MIGRATION,
  JOB_VIA_MIGRATION,
  INDEX_WITHOUT_FOREIGN_KEYS_MIGRATION,
  ONE_OPERATION_PER_TRANSACTION_MIGRATION,
  EDITIONS_INDEX_MIGRATION,
  JOB_EDITION_ROWS_MIGRATION,
  APPROVALS_MIGRATION,
  JOB_APPROVALS_MIGRATION,
];

/** Any fixed number: the advisory lock that serialises processes migrating the same database. */
const MIGRATION_LOCK = 7_372_001;

/**
 * Applies the migrations not yet recorded, then the SQL functions and triggers whose file changed
 * (server/db/functions, functions.ts), all in one transaction. Answers the migrations applied.
 */
export async function migrate(driver: SqlDriver): Promise<number[]> {
  return driver.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query<{ version: number }>("SELECT version FROM schema_migrations");
    const applied = new Set(rows.map((row) => Number(row.version)));
    const done: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      await tx.exec(migration.sql);
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
        migration.version,
        migration.name,
      ]);
      done.push(migration.version);
    }
    await applyFunctions(tx, done.length > 0);
    return done;
  });
}
