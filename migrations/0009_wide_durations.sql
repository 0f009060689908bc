-- Wait and run times in milliseconds as bigint. An integer holds 2^31 - 1 ms, 24.8 days: a job
-- due longer ago than that (a runAt in the past, a queue paused for weeks) made the settle of
-- its whole batch fail, and every job in the batch ran again after its lease.

-- One rewrite per table (both columns in one ALTER), under an exclusive lock held for the
-- rewrite: the archive's size sets how long this migration takes.
ALTER TABLE :SLUICE_SCHEMA.archive ALTER COLUMN duration_ms TYPE bigint, ALTER COLUMN wait_ms TYPE bigint;

ALTER TABLE :SLUICE_SCHEMA.job_stats ALTER COLUMN duration_ms TYPE bigint, ALTER COLUMN wait_ms TYPE bigint;

-- The settle function that reads them as bigint is in functions/settle.sql, applied after the
-- migrations.
