-- Terminals (issue 14): made by POST /v1/sessions/{id}/terminals, opened once by a WebSocket.
-- The program starts when the socket opens and is hung up when it closes, so a terminal is one
-- connection: `connected_at` marks it used. Its token (for browsers, which cannot send the
-- API key on a WebSocket) is stored only as a hash and expires within a minute.
CREATE TABLE terminals (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  session_id text NOT NULL,
  spec jsonb NOT NULL,
  token_hash bytea NOT NULL,
  token_expires_at timestamptz NOT NULL,
  connected_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX terminals_created_at ON terminals (created_at);
