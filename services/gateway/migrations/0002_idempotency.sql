-- Responses of requests sent with an Idempotency-Key, replayed byte for byte for 24 hours.
CREATE TABLE idempotency_keys (
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  idempotency_key text NOT NULL,
  -- sha256 of method, path and body: a key reused for another request is refused.
  request_hash bytea NOT NULL,
  -- NULL while the first request is still running.
  response_status integer,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, idempotency_key)
);

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
