-- Plans carry every per-plan number of spec section 8.3. Enterprise accounts override them.
CREATE TABLE plans (
  name text PRIMARY KEY,
  requests_per_minute integer NOT NULL,
  max_execution_timeout_s integer NOT NULL,
  max_memory_mb integer NOT NULL,
  max_file_size_bytes bigint NOT NULL,
  max_files_per_request integer NOT NULL,
  max_env_vars integer NOT NULL,
  max_concurrent_sessions integer NOT NULL,
  max_session_ttl_s integer NOT NULL,
  resource_overrides boolean NOT NULL
);

INSERT INTO plans VALUES
  ('free',       100,  30, 1024, 10485760,  100, 100,  10,  86400, false),
  ('paid',       1000, 300, 4096, 52428800, 1000, 500, 100, 604800, true),
  ('enterprise', 1000, 300, 4096, 52428800, 1000, 500, 100, 604800, true);

CREATE TABLE accounts (
  id text PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL REFERENCES plans (name),
  -- Enterprise custom values, keyed like the plans columns; empty for other plans.
  plan_overrides jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  name text NOT NULL DEFAULT '',
  -- sha256 of the key; the key itself is never stored.
  key_hash bytea NOT NULL UNIQUE,
  -- The first characters of the key, to recognise it in listings.
  key_prefix text NOT NULL,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_used_at timestamptz
);

CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE sessions (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  node_id text NOT NULL,
  -- creating → active (→ idle → deep-sleep, Lifecycle issue)
  state text NOT NULL DEFAULT 'creating',
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  resource_limits jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  last_active_at timestamptz NOT NULL DEFAULT now(),
  -- Set when the session is deleted or expires: from then on it is gone for the API.
  deleted_at timestamptz,
  -- Set once the node has removed the sandbox; until then the sweeper keeps retrying.
  destroyed_at timestamptz,
  -- A sweeper that is destroying the sandbox holds this lease, so replicas do not double work.
  destroy_lease_until timestamptz
);

CREATE INDEX sessions_account_live ON sessions (account_id, created_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX sessions_expiry ON sessions (expires_at) WHERE deleted_at IS NULL;
CREATE INDEX sessions_to_destroy ON sessions (deleted_at) WHERE deleted_at IS NOT NULL AND destroyed_at IS NULL;
