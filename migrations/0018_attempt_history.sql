-- What a job's page needs to tell its whole story (the attempts timeline), wherever the job is:
--
-- - jobs.started_at: when the claim took the running attempt. Written by the claim's own update
--   of the row, so it costs no extra statement or row version; stale (and unread) once the
--   attempt has settled.
-- - archive.errors: the failed attempts of a job that completed after retries, as its error
--   history was (null when it completed at its first attempt, the common case, so most archived
--   rows carry nothing more).
-- - archive.invocation: the drain invocation that ran its last attempt.
ALTER TABLE :SLUICE_SCHEMA.jobs ADD COLUMN started_at timestamptz;
ALTER TABLE :SLUICE_SCHEMA.archive ADD COLUMN errors jsonb, ADD COLUMN invocation text;
