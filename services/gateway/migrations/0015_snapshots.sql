-- Snapshots of sessions' workspaces (ADR 44). The bytes live in the blob store of the node that
-- took them (`stored_in`: "s3://…" is shared by the nodes naming it, "local:<node>" is that
-- node's own); a row is `pending` while the node stores them and `ready` once they are.
CREATE TABLE snapshots (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  -- The session it was taken from (which may be gone since).
  session_id text NOT NULL,
  name text,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'ready')),
  size_bytes bigint NOT NULL DEFAULT 0,
  processes_kept boolean NOT NULL DEFAULT false,
  node_id text NOT NULL,
  stored_in text NOT NULL DEFAULT '',
  -- The source's settings, which a session created from it gets unless its create names others.
  resource_limits jsonb NOT NULL,
  egress jsonb,
  metadata json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX snapshots_by_account ON snapshots (account_id, created_at DESC, id);
-- The sweeper's look for pending rows a gateway that died left behind.
CREATE INDEX snapshots_pending ON snapshots (created_at) WHERE state = 'pending';

-- The blobs of deleted snapshot rows, however they went (a delete, a failed snapshot, their
-- account's deletion by cascade): the sweeper asks a node that reaches `stored_in` to remove
-- each, then forgets it.
CREATE TABLE snapshot_blob_removals (
  snapshot_id text PRIMARY KEY,
  node_id text NOT NULL,
  stored_in text NOT NULL,
  queued_at timestamptz NOT NULL DEFAULT now(),
  -- A replica removing it holds it until then (a lease, as sessions' removals).
  claimed_until timestamptz
);

CREATE FUNCTION queue_snapshot_blob_removal() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO snapshot_blob_removals (snapshot_id, node_id, stored_in)
  VALUES (OLD.id, OLD.node_id, OLD.stored_in)
  ON CONFLICT (snapshot_id) DO NOTHING;
  RETURN OLD;
END
$$;

CREATE TRIGGER snapshots_blob_removal AFTER DELETE ON snapshots
  FOR EACH ROW EXECUTE FUNCTION queue_snapshot_blob_removal();

-- Per-plan quotas: how many snapshots an account keeps, and their bytes in all (stored size).
ALTER TABLE plans ADD COLUMN max_snapshots integer NOT NULL DEFAULT 10;
ALTER TABLE plans ADD COLUMN max_snapshot_bytes bigint NOT NULL DEFAULT 1073741824;
UPDATE plans SET max_snapshots = 100, max_snapshot_bytes = 53687091200
  WHERE name IN ('paid', 'enterprise');

-- A pending snapshot row, unless the account has max_snapshots rows already or its ready ones
-- take max_bytes or more: then no row (the caller answers snapshot_quota_exceeded). The
-- account's row is locked, so two snapshots at once cannot both pass the count.
CREATE FUNCTION insert_snapshot(
  p_id text,
  p_account_id text,
  p_session_id text,
  p_name text,
  p_node_id text,
  p_resource_limits jsonb,
  p_egress jsonb,
  p_metadata json,
  p_max_count integer,
  p_max_bytes bigint
) RETURNS SETOF snapshots
LANGUAGE plpgsql AS $$
DECLARE
  kept bigint;
  used bigint;
BEGIN
  PERFORM 1 FROM accounts WHERE id = p_account_id FOR UPDATE;
  SELECT count(*), coalesce(sum(size_bytes), 0) INTO kept, used
    FROM snapshots WHERE account_id = p_account_id;
  IF kept >= p_max_count OR used >= p_max_bytes THEN
    RETURN;
  END IF;
  RETURN QUERY
    INSERT INTO snapshots
      (id, account_id, session_id, name, node_id, resource_limits, egress, metadata)
    VALUES (p_id, p_account_id, p_session_id, p_name, p_node_id, p_resource_limits, p_egress,
            p_metadata)
    RETURNING *;
END
$$;
