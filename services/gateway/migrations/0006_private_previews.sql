-- decisions.md: a session created with "preview": {"private": true} needs X-Preview-Token.
-- Only the token's sha256 is kept.
ALTER TABLE sessions ADD COLUMN preview_token_hash bytea;
