-- The fleet (issue 12): agent nodes join and leave at run time. Each gateway replica reads
-- this registry and checks every node's heartbeat itself (a gRPC call); what it saw last is
-- kept here too, for operators.
CREATE TABLE nodes (
  id text PRIMARY KEY,
  -- host:port of the agent's gRPC service.
  address text NOT NULL,
  -- active: takes new sessions; cordoned: keeps its sessions, takes no new one; draining:
  -- its sessions move to other nodes through deep sleep.
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'cordoned', 'draining')),
  -- Who registered it: the gateway's AGENT_NODES, an operator, or the agent's announcement.
  source text NOT NULL CHECK (source IN ('config', 'operator', 'agent')),
  version text,
  -- The node's last heartbeat answer (capacity, load, pool, blob store).
  status jsonb,
  last_seen_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Where a deep-sleeping session's workspace is: a blob store's id ("s3://…", shared by the
-- nodes naming it, so the session can wake on any of them) or a node's own ("local:<node>",
-- "node:<node>").
ALTER TABLE sessions ADD COLUMN saved_in text;
-- Why a session ended, where the API says so: 'node_lost' (its node was removed as lost).
ALTER TABLE sessions ADD COLUMN end_reason text;
CREATE INDEX sessions_node ON sessions (node_id) WHERE deleted_at IS NULL;
