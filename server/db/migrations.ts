import type { SqlDriver } from "./driver";

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
];

/** Any fixed number: the advisory lock that serialises processes migrating the same database. */
const MIGRATION_LOCK = 7_372_001;

/** Applies the migrations not yet recorded, all in one transaction. */
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
    return done;
  });
}
