-- A session's row in one round trip, with the account's concurrent-session limit enforced
-- atomically: the account row is locked, then the live sessions are counted (each statement
-- of a plpgsql function reads a new snapshot, so the count sees every insert committed before
-- the lock was granted). Returns no row when the limit is reached. Metadata is `json`, as its
-- column (0003): it comes back as sent.
CREATE FUNCTION insert_session(
  p_id text,
  p_account_id text,
  p_node_id text,
  p_metadata json,
  p_resource_limits jsonb,
  p_ttl_s integer,
  p_preview_token_hash bytea,
  p_max_concurrent integer
) RETURNS SETOF sessions
LANGUAGE plpgsql AS $$
DECLARE
  live bigint;
BEGIN
  PERFORM 1 FROM accounts WHERE id = p_account_id FOR UPDATE;
  SELECT count(*) INTO live FROM sessions
   WHERE account_id = p_account_id AND deleted_at IS NULL AND expires_at > now();
  IF live >= p_max_concurrent THEN
    RETURN;
  END IF;
  RETURN QUERY
    INSERT INTO sessions
      (id, account_id, node_id, metadata, resource_limits, expires_at, preview_token_hash)
    VALUES (p_id, p_account_id, p_node_id, p_metadata, p_resource_limits,
            now() + make_interval(secs => p_ttl_s), p_preview_token_hash)
    RETURNING *;
END
$$;
