-- Idle and deep sleep (spec part 3).
ALTER TABLE sessions ADD COLUMN lifecycle_lease_until timestamptz;
-- Files in the workspace when it was saved, for session info while it sleeps.
ALTER TABLE sessions ADD COLUMN sleep_files_count integer;
-- Set once the node has confirmed the workspace is saved and the sandbox removed.
ALTER TABLE sessions ADD COLUMN sleep_confirmed_at timestamptz;
CREATE INDEX sessions_lifecycle ON sessions (state, last_active_at) WHERE deleted_at IS NULL;
