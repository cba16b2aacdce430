-- An endpoint that fails every delivery for long enough is disabled (as Svix and Stripe do):
-- its pending deliveries are dropped and no new ones are queued until it is registered again.
ALTER TABLE webhook_endpoints ADD COLUMN failing_since timestamptz;
ALTER TABLE webhook_endpoints ADD COLUMN disabled_at timestamptz;
CREATE INDEX webhook_deliveries_pending_endpoint ON webhook_deliveries (endpoint_id)
  WHERE status = 'pending';
