-- An operation event's data: a snapshot of the row, rendered as GET /nft/operations/{id} when sent
-- (server/webhooks/render.ts). Signed transactions are public once sent; the view keeps their hashes.
CREATE OR REPLACE FUNCTION webhook_operation_data(o operations) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'id', o.id, 'chainId', o.chain_id, 'operation', o.operation, 'status', o.status, 'from', o.from_address,
    'contractAddress', o.contract_address, 'nonce', o.nonce, 'transactions', o.transactions,
    'blockNumber', o.block_number, 'result', o.result, 'error', o.error, 'final', o.final,
    'reorgs', o.reorgs, 'createdAt', o.created_at, 'updatedAt', o.updated_at)
$$;
