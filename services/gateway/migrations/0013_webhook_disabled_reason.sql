-- Why an endpoint was disabled, shown with it (GET /v1/webhooks): it failed every delivery for
-- too long, or its URL is refused (issue 40: a gateway checks, when it starts, every endpoint
-- registered before registration refused this host's own addresses and every special range).
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text;
UPDATE webhook_endpoints SET disabled_reason = 'every delivery failed for too long'
 WHERE disabled_at IS NOT NULL;
