-- How many of an operation's transactions were sent: the follower marks a replacement `unsent`
-- until the node takes it, so a refused fee bump reports no operation.replaced.
CREATE OR REPLACE FUNCTION webhook_sent_count(transactions jsonb) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
  SELECT count(*)::integer FROM jsonb_array_elements(transactions) AS t(tx) WHERE NOT (t.tx ? 'unsent')
$$;
