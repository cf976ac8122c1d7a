-- Whether endpoint w takes event e (k: w's access key; a row of NULLs for the root key's endpoints).
-- The one rule: the fan-out (webhook_fan_out) and the check before each attempt (webhook_claim)
-- both call it. webhook.test goes to its endpoint alone. Any other event: w is enabled, subscribed
-- to its type, its filters match (a wallets filter takes a transfer to or from one of them), and
-- its key could read the event: held, unexpired, with the read scope of the type, and the event's
-- collection and wallet within its limits, or the key made the operation itself. A collections
-- entry is an address (every chain) or "<chain id>:<address>" (that chain only), in the endpoint's
-- filter as in the key's limit.
CREATE OR REPLACE FUNCTION webhook_takes(w webhook_endpoints, k access_keys, e webhook_events) RETURNS boolean
  LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN e.type = 'webhook.test' THEN w.id = e.endpoint_id ELSE
    w.enabled AND w.events ? e.type
    AND (w.collections IS NULL OR (e.collection IS NOT NULL AND (w.collections ? e.collection
         OR (e.chain_id IS NOT NULL AND w.collections ? (e.chain_id || ':' || e.collection)))))
    AND (w.chains IS NULL OR (e.chain_id IS NOT NULL AND w.chains ? e.chain_id))
    AND (w.wallets IS NULL OR (e.wallet IS NOT NULL AND w.wallets ? e.wallet)
         OR (e.type = 'collection.transfer' AND w.wallets ?| ARRAY[lower(e.data ->> 'from'), lower(e.data ->> 'to')]))
    AND (w.access_key_id IS NULL OR (
      k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
      AND k.scopes ? (CASE WHEN e.type = 'wallet.low_balance' THEN 'wallets:read' ELSE 'nft:read' END)
      AND (e.access_key_id = k.id OR (
        (k.collections IS NULL OR e.collection IS NULL OR k.collections ? e.collection
         OR (e.chain_id IS NOT NULL AND k.collections ? (e.chain_id || ':' || e.collection)))
        AND (k.chains IS NULL OR e.chain_id IS NULL OR k.chains ? e.chain_id)
        AND (k.wallets IS NULL OR e.wallet IS NULL OR k.wallets ? e.wallet))))) END
$$;
