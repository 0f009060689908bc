-- A claim that is a HOT update: nothing it writes is indexed, in a key or a predicate, so the
-- leased job's new version stays on its page (the fillfactor of 0024 leaves room) with no new
-- index entry. Until now a claim moved `run_at` to the lease's end (a key of the ready and admit
-- indexes) and set `lease_token` and `attempts` (in their predicates and in those of jobs_leased,
-- jobs_admitted, jobs_last_attempt and jobs_retrying): every claimed job got a new entry in the
-- primary key and in one or two partial indexes.
--
-- - The lease's end has a column of its own, `lease_until`; `run_at` stays the job's place in
--   claim order while it is leased. A job whose lease ran out (its drain died) is taken again at
--   that place, not behind the jobs that were due after it.
-- - The ready and admit indexes hold a queue's or a partition's jobs whether leased or not. The
--   walks pass the few jobs in flight at the head of their range, and take a leased job only
--   once its lease has ended.
-- - The jobs in flight are counted on `claim_leases`: one row per claim and queue (and admission
--   partition), with the lease's token, its end and its jobs' ids, written by the claim. A job
--   counts while its lease is its row's (`jobs.lease_token = token`) and the row's end has not
--   passed (the view `leased_jobs`), so a count is exact whatever ended the lease (a settle, a
--   hand-back, a suspended step, a dead letter) and whether or not the row is gone yet: the
--   settle deletes the rows whose jobs have all ended, and maintenance those a settle left.
-- - `jobs_retrying` holds the jobs that failed an attempt (`last_error`), which only a settle
--   writes.
--
-- The upgrade moves each leased job's lease end out of `run_at` (its place comes back from
-- `place_at`, which single-consumer claims kept, else it is its enqueue time, no later than its
-- place was, as the single-consumer restore did), and gives it a lease row of its own. The
-- indexes are rebuilt under the migration's lock (about 4 s per million jobs on 2 cores).
ALTER TABLE :SLUICE_SCHEMA.jobs ADD COLUMN lease_until timestamptz;

CREATE TABLE :SLUICE_SCHEMA.claim_leases (
  token uuid NOT NULL,
  queue text NOT NULL,
  policy text,
  partition_key text,
  lease_until timestamptz NOT NULL,
  ids bigint[] NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0.05);
CREATE INDEX claim_leases_token ON :SLUICE_SCHEMA.claim_leases (token);
CREATE INDEX claim_leases_queue ON :SLUICE_SCHEMA.claim_leases (queue, lease_until);
CREATE INDEX claim_leases_partition ON :SLUICE_SCHEMA.claim_leases (policy, partition_key, lease_until)
  WHERE policy IS NOT NULL;

-- The jobs each lease row still holds: its ids whose lease is still that row's token. A reader
-- adds `lease_until > now()` for the jobs running, `<= now()` for those whose lease ran out.
CREATE VIEW :SLUICE_SCHEMA.leased_jobs AS
SELECT l.queue, l.policy, l.partition_key, l.lease_until, l.token, j.id, j.attempts, j.max_attempts, j.leased_by,
       j.run_at
FROM :SLUICE_SCHEMA.claim_leases l
CROSS JOIN LATERAL unnest(l.ids) AS x(id)
JOIN :SLUICE_SCHEMA.jobs j ON j.id = x.id AND j.lease_token = l.token;

UPDATE :SLUICE_SCHEMA.jobs
SET lease_until = run_at, run_at = coalesce(place_at, enqueued_at), place_at = NULL
WHERE lease_token IS NOT NULL;

INSERT INTO :SLUICE_SCHEMA.claim_leases (token, queue, policy, partition_key, lease_until, ids)
SELECT lease_token, queue, policy, partition_key, lease_until, ARRAY[id]
FROM :SLUICE_SCHEMA.jobs WHERE lease_token IS NOT NULL;

DROP INDEX :SLUICE_SCHEMA.jobs_leased;
DROP INDEX :SLUICE_SCHEMA.jobs_admitted;
DROP INDEX :SLUICE_SCHEMA.jobs_last_attempt;
DROP INDEX :SLUICE_SCHEMA.jobs_ready;
CREATE INDEX jobs_ready ON :SLUICE_SCHEMA.jobs (queue, priority, run_at, id) WHERE policy IS NULL;
DROP INDEX :SLUICE_SCHEMA.jobs_admit;
CREATE INDEX jobs_admit ON :SLUICE_SCHEMA.jobs (policy, partition_key, priority, run_at, id)
  WHERE policy IS NOT NULL;
DROP INDEX :SLUICE_SCHEMA.jobs_retrying;
CREATE INDEX jobs_retrying ON :SLUICE_SCHEMA.jobs (queue, run_at) WHERE last_error IS NOT NULL;
