-- The archive as one row per group of jobs a settle ends together, not a row and a primary-key
-- entry per job. A group is the jobs of one settle with the same queue, status and invocation
-- whose ids share a range of 1,024 (`bucket = id >> 10`); per-job columns are parallel arrays
-- (element k of each is job k). A drain's batch of 200 is one or two rows; a job is found by id
-- through its range's rows (the primary key starts with `bucket`): archived_job(id), in
-- functions/archive.sql. `archive` becomes a view with the old table's columns, a job per row,
-- plus `bucket`; an INSERT into it (as settles written before this migration did) adds a group of
-- one job.
CREATE TABLE :SLUICE_SCHEMA.archive_groups (
  bucket bigint NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  finished_at timestamptz NOT NULL DEFAULT now(),
  queue text NOT NULL,
  status text NOT NULL CHECK (status IN ('completed', 'expired')),
  invocation text,
  ids bigint[] NOT NULL,
  names text[] NOT NULL,
  payloads jsonb[] NOT NULL,
  priorities smallint[] NOT NULL,
  attempts integer[] NOT NULL,
  max_attempts integer[] NOT NULL,
  enqueued_at timestamptz[] NOT NULL,
  durations_ms bigint[] NOT NULL,
  waits_ms bigint[] NOT NULL,
  errors jsonb[] NOT NULL,
  results jsonb[] NOT NULL,
  CONSTRAINT archive_groups_pkey PRIMARY KEY (bucket, seq)
);
CREATE INDEX archive_groups_finished_at ON :SLUICE_SCHEMA.archive_groups USING brin (finished_at);

-- The rows archived so far, grouped as a settle would have grouped them (one settle's rows share
-- their finished_at).
INSERT INTO :SLUICE_SCHEMA.archive_groups (bucket, finished_at, queue, status, invocation, ids, names, payloads,
                                           priorities, attempts, max_attempts, enqueued_at, durations_ms,
                                           waits_ms, errors, results)
SELECT id >> 10, finished_at, queue, status, invocation, array_agg(id), array_agg(name), array_agg(payload),
       array_agg(priority), array_agg(attempts), array_agg(max_attempts), array_agg(enqueued_at),
       array_agg(duration_ms), array_agg(wait_ms), array_agg(errors), array_agg(result)
FROM :SLUICE_SCHEMA.archive
GROUP BY id >> 10, finished_at, queue, status, invocation;

DROP TABLE :SLUICE_SCHEMA.archive;

CREATE VIEW :SLUICE_SCHEMA.archive AS
SELECT x.id, g.queue, x.name, x.payload, x.priority, x.attempts, x.max_attempts, g.status, x.enqueued_at,
       x.duration_ms, g.finished_at, x.wait_ms, x.errors, g.invocation, x.result, g.bucket
FROM :SLUICE_SCHEMA.archive_groups g
CROSS JOIN LATERAL unnest(g.ids, g.names, g.payloads, g.priorities, g.attempts, g.max_attempts, g.enqueued_at,
                          g.durations_ms, g.waits_ms, g.errors, g.results)
  AS x(id, name, payload, priority, attempts, max_attempts, enqueued_at, duration_ms, wait_ms, errors, result);

-- Here, not in functions/: the trigger must exist from this migration's commit on, while the
-- function files (applied after the migrations) may still be the older ones.
CREATE FUNCTION :SLUICE_SCHEMA.archive_insert()
RETURNS trigger
LANGUAGE plpgsql
AS $fn$
BEGIN
  NEW.finished_at := coalesce(NEW.finished_at, now());
  NEW.bucket := NEW.id >> 10;
  INSERT INTO :SLUICE_SCHEMA.archive_groups (bucket, finished_at, queue, status, invocation, ids, names, payloads,
                                             priorities, attempts, max_attempts, enqueued_at, durations_ms,
                                             waits_ms, errors, results)
  VALUES (NEW.bucket, NEW.finished_at, NEW.queue, NEW.status, NEW.invocation, ARRAY[NEW.id], ARRAY[NEW.name],
          ARRAY[NEW.payload], ARRAY[NEW.priority], ARRAY[NEW.attempts], ARRAY[NEW.max_attempts],
          ARRAY[NEW.enqueued_at], ARRAY[NEW.duration_ms], ARRAY[NEW.wait_ms], ARRAY[NEW.errors], ARRAY[NEW.result]);
  RETURN NEW;
END
$fn$;

CREATE TRIGGER archive_insert INSTEAD OF INSERT ON :SLUICE_SCHEMA.archive
FOR EACH ROW EXECUTE FUNCTION :SLUICE_SCHEMA.archive_insert();
