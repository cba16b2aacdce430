-- A session's egress policy (ADR 30): {"default": "allow"|"deny", "allow": [...], "deny": [...]}
-- as the API normalised it; null is allow-all. A plan says which default a session gets when
-- its create names none (an enterprise account may override it, like its other limits).
ALTER TABLE sessions ADD COLUMN egress jsonb;
ALTER TABLE plans ADD COLUMN egress_default text NOT NULL DEFAULT 'allow'
  CHECK (egress_default IN ('allow', 'deny'));

-- insert_session (0008) with the policy: a new overload, so that a replica still running the
-- previous release keeps calling the one it knows during a rolling upgrade.
CREATE FUNCTION insert_session(
  p_id text,
  p_account_id text,
  p_node_id text,
  p_metadata json,
  p_resource_limits jsonb,
  p_ttl_s integer,
  p_preview_token_hash bytea,
  p_max_concurrent integer,
  p_egress jsonb
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
      (id, account_id, node_id, metadata, resource_limits, expires_at, preview_token_hash, egress)
    VALUES (p_id, p_account_id, p_node_id, p_metadata, p_resource_limits,
            now() + make_interval(secs => p_ttl_s), p_preview_token_hash, p_egress)
    RETURNING *;
END
$$;
