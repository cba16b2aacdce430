-- Webhook endpoints (decisions.md) and the durable outbox their events are delivered from.
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  url text NOT NULL,
  events text[] NOT NULL,
  -- The signing secret, AES-256-GCM under the gateway's SECRETS_KEY (never in clear).
  secret_encrypted text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id);

-- One row per (event, endpoint). The payload is fixed when the event happens, so every retry
-- sends the same bytes under the same webhook-id.
CREATE TABLE webhook_deliveries (
  event_id text NOT NULL,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_type text NOT NULL,
  payload text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- pending → delivered | failed (retries exhausted)
  status text NOT NULL DEFAULT 'pending',
  attempts integer NOT NULL DEFAULT 0,
  -- When the next attempt is due; a replica delivering it pushes this forward as its lease.
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error text,
  delivered_at timestamptz,
  PRIMARY KEY (event_id, endpoint_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

-- Keys that could do everything may manage webhooks too.
UPDATE api_keys SET scopes = scopes || ARRAY['webhooks']
 WHERE scopes @> ARRAY['sessions', 'execute', 'files', 'processes'];
