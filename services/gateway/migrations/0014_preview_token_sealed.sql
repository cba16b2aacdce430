-- ADR 41: a private preview's token, sealed with SECRETS_KEY (AES-256-GCM, as webhook secrets),
-- so that the session's owner can read it again in the session's info. The sha256 in
-- preview_token_hash still checks visitors; sessions made before this column keep only that.
ALTER TABLE sessions ADD COLUMN preview_token_sealed text;

-- insert_session (0012) with the sealed token: a new overload, so that a replica still running
-- the previous release keeps calling the one it knows during a rolling upgrade.
CREATE FUNCTION insert_session(
  p_id text,
  p_account_id text,
  p_node_id text,
  p_metadata json,
  p_resource_limits jsonb,
  p_ttl_s integer,
  p_preview_token_hash bytea,
  p_max_concurrent integer,
  p_egress jsonb,
  p_preview_token_sealed text
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
      (id, account_id, node_id, metadata, resource_limits, expires_at, preview_token_hash, egress,
       preview_token_sealed)
    VALUES (p_id, p_account_id, p_node_id, p_metadata, p_resource_limits,
            now() + make_interval(secs => p_ttl_s), p_preview_token_hash, p_egress,
            p_preview_token_sealed)
    RETURNING *;
END
$$;
