/**
 * Migration 33: a transaction hash belongs to one operation, and a nonce to one unfinished one.
 *
 * Issue 51: two keyed mints answered 200 on one transaction. A re-sign and a new write were handed
 * the same nonce; the same call signed at the same nonce with the same fees is the same
 * transaction, so both rows held its hash and both confirmed from its receipt. The store now
 * refuses either state, whatever the engine's code path:
 *
 * - `operation_transactions`, every hash an operation signed, keyed by the hash. A trigger keeps
 *   it from the operations' `transactions` and raises a unique violation on a hash another
 *   operation holds; deleting an operation (never broadcast) frees its hashes.
 * - `operations_nonce_holder_idx`: at most one queued or sent operation per (chain, address, nonce).
 *
 * Existing rows: hashes are registered oldest operation first (a later one sharing a hash is left
 * out, and counted by /metrics' operations_sharing_transaction); of unfinished operations sharing a
 * nonce, the oldest keeps it and the others lose it (NULL): the follower re-signs them (an unmined
 * one at a new nonce, a mined one settles from its receipt by hash).
 */
export const ONE_OPERATION_PER_TRANSACTION_MIGRATION = {
  version: 33,
  name: "one operation per transaction hash, one unfinished operation per nonce",
  sql: `
    CREATE TABLE operation_transactions (
      hash         text PRIMARY KEY,
      operation_id text NOT NULL
    );
    CREATE INDEX operation_transactions_operation_idx ON operation_transactions (operation_id);
    INSERT INTO operation_transactions (hash, operation_id)
      SELECT t.tx->>'hash', o.id
      FROM operations o, jsonb_array_elements(o.transactions) AS t(tx)
      WHERE t.tx->>'hash' IS NOT NULL
      ORDER BY o.created_at, o.id
      ON CONFLICT (hash) DO NOTHING;

    CREATE FUNCTION operation_transactions_record() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        DELETE FROM operation_transactions WHERE operation_id = OLD.id;
        RETURN NULL;
      END IF;
      IF TG_OP = 'UPDATE' AND NEW.transactions IS NOT DISTINCT FROM OLD.transactions THEN
        RETURN NULL;
      END IF;
      INSERT INTO operation_transactions (hash, operation_id)
        SELECT t.tx->>'hash', NEW.id FROM jsonb_array_elements(NEW.transactions) AS t(tx)
        WHERE t.tx->>'hash' IS NOT NULL
        ON CONFLICT (hash) DO NOTHING;
      IF EXISTS (SELECT 1 FROM jsonb_array_elements(NEW.transactions) AS t(tx)
                 JOIN operation_transactions h ON h.hash = t.tx->>'hash'
                 WHERE h.operation_id <> NEW.id) THEN
        RAISE EXCEPTION 'a transaction of operation % belongs to another operation', NEW.id
          USING ERRCODE = 'unique_violation', CONSTRAINT = 'operation_transactions_pkey',
                TABLE = 'operation_transactions';
      END IF;
      RETURN NULL;
    END
    $$;
    CREATE TRIGGER operations_transactions_recorded AFTER INSERT OR UPDATE OF transactions ON operations
      FOR EACH ROW EXECUTE FUNCTION operation_transactions_record();
    CREATE TRIGGER operations_transactions_freed AFTER DELETE ON operations
      FOR EACH ROW EXECUTE FUNCTION operation_transactions_record();

    UPDATE operations o SET nonce = NULL
      WHERE o.status IN ('queued', 'sent') AND o.nonce IS NOT NULL AND EXISTS (
        SELECT 1 FROM operations p
        WHERE p.chain_id = o.chain_id AND p.from_address = o.from_address AND p.nonce = o.nonce
          AND p.status IN ('queued', 'sent') AND (p.created_at, p.id) < (o.created_at, o.id));
    CREATE UNIQUE INDEX operations_nonce_holder_idx ON operations (chain_id, from_address, nonce)
      WHERE status IN ('queued', 'sent');
  `,
};
