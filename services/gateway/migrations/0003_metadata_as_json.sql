-- Metadata is returned as it was sent: `json` keeps the text (key order included), where
-- `jsonb` would normalise it.
ALTER TABLE sessions ALTER COLUMN metadata DROP DEFAULT;
ALTER TABLE sessions ALTER COLUMN metadata TYPE json USING metadata::json;
ALTER TABLE sessions ALTER COLUMN metadata SET DEFAULT '{}'::json;
