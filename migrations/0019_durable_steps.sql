-- Durable steps (docs/steps.md): a job made of steps whose results outlive a run.
--
-- - job_steps: one row per step a job has recorded, in call order (seq). A step's row is written
--   once it has a result (state completed), or while it waits (sleeping is not a row state: a sleep
--   is a completed row whose wake_at is the end of the sleep; waiting is an event wait or an
--   invoked child not yet ended), or when its function failed (failed, with its error; run again by
--   the job's next attempt). Rows stay while the job is in jobs, the archive or the dead letters,
--   and go with it.
-- - jobs.waiting: how many of a suspended job's waits (event waits, invoked children) are still
--   open; null for a job that never recorded a wait. The last wait to resolve makes the job due.
-- - jobs.parent_id: the job whose ctx.invoke enqueued this one; its end resolves the parent's step.
-- - archive.result: the handler's return value (JSON), null when it returned nothing.
-- - event_log: recent events, so that a wait recorded after its event was published still finds
--   it (a wait looks back to the start of the run that records it). Pruned by maintenance.
CREATE TABLE :SLUICE_SCHEMA.job_steps (
  job_id bigint NOT NULL,
  seq integer NOT NULL,
  name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('run', 'sleep', 'event', 'invoke')),
  state text NOT NULL CHECK (state IN ('completed', 'waiting', 'failed')),
  result jsonb,
  error jsonb,
  attempts integer NOT NULL DEFAULT 1,
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  wake_at timestamptz,
  topic text,
  regex text,
  match jsonb,
  child_id bigint,
  PRIMARY KEY (job_id, seq)
);
-- Open event waits: by topic for a pattern without wildcards (regex null), and the few whose
-- pattern has wildcards (matched with their regex).
CREATE INDEX job_steps_event_topic ON :SLUICE_SCHEMA.job_steps (topic)
  WHERE kind = 'event' AND state = 'waiting' AND regex IS NULL;
CREATE INDEX job_steps_event_pattern ON :SLUICE_SCHEMA.job_steps (job_id)
  WHERE kind = 'event' AND state = 'waiting' AND regex IS NOT NULL;

ALTER TABLE :SLUICE_SCHEMA.jobs ADD COLUMN waiting integer, ADD COLUMN parent_id bigint;
ALTER TABLE :SLUICE_SCHEMA.archive ADD COLUMN result jsonb;

-- logged_at is when the event reached the bus (an outbox entry: when it was relayed), which a
-- wait's look-back reads; published_at is the event's own time, as subscribers get it.
-- Unlogged: no WAL for a publish to pay. A crash empties it, which loses nothing a wait needs:
-- the runs a crash interrupts start again after it, and look back only that far.
CREATE UNLOGGED TABLE :SLUICE_SCHEMA.event_log (
  logged_at timestamptz NOT NULL DEFAULT now(),
  published_at timestamptz NOT NULL,
  topic text NOT NULL,
  event_id text NOT NULL,
  payload jsonb NOT NULL,
  headers jsonb NOT NULL
);
CREATE INDEX event_log_at ON :SLUICE_SCHEMA.event_log USING brin (logged_at);
