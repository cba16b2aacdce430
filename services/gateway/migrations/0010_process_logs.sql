-- Replayable output (issue 14): each run's output is kept on its node, bounded per plan.
ALTER TABLE plans ADD COLUMN max_output_log_bytes bigint NOT NULL DEFAULT 1048576;
UPDATE plans SET max_output_log_bytes = 4194304 WHERE name = 'paid';
UPDATE plans SET max_output_log_bytes = 16777216 WHERE name = 'enterprise';
