-- A leased job is not waiting: jobs_ready keeps only the jobs that are (plain, no lease). A claim
-- wrote a new entry there for every job it leased (its lease's end is its run_at), about 80 B
-- of WAL a job and the splits of the pages those entries filled, and walks near the end of a
-- drain passed every job in flight. Jobs whose lease ran out, which a claim takes again, are
-- found on jobs_leased, now ordered by the lease's end: claims, caps and single-consumer checks
-- read a range of it (lease ended, or not yet) instead of every leased job of the queue.
-- Both are rebuilt under the migration's lock (about 4 s per million jobs waiting on 2 cores).
DROP INDEX :SLUICE_SCHEMA.jobs_ready;
CREATE INDEX jobs_ready ON :SLUICE_SCHEMA.jobs (queue, priority, run_at, id)
  WHERE policy IS NULL AND lease_token IS NULL;
DROP INDEX :SLUICE_SCHEMA.jobs_leased;
CREATE INDEX jobs_leased ON :SLUICE_SCHEMA.jobs (queue, run_at) WHERE lease_token IS NOT NULL;
