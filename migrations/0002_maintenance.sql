-- Maintenance tasks run from cron, which may fire twice at once or not at all for a while.
-- Each task runs when its slot is free: a caller takes the slot with one conditional upsert.

CREATE TABLE :SLUICE_SCHEMA.maintenance (
  task text PRIMARY KEY,
  next_run_at timestamptz NOT NULL,
  last_started_at timestamptz NOT NULL DEFAULT now(),
  last_rows integer,
  last_error text
);

-- Jobs on their last attempt: maintenance finds those whose lease ran out without walking the
-- queue. Only last attempts enter this index, so healthy first runs pay nothing for it.
CREATE INDEX jobs_last_attempt ON :SLUICE_SCHEMA.jobs (run_at) WHERE lease_token IS NOT NULL AND attempts >= max_attempts;
