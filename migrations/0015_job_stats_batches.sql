-- Job stats per settled batch: one row per (name, queue, status) per settle statement instead of
-- one per finished attempt. `jobs` counts the attempts the row stands for; `durations` and `waits`
-- hold their run and wait times (ms, NULL where unknown), one element per attempt, in no
-- particular order, so that percentiles stay exact: readers unnest them (job_stats_runs).
--
-- Rows written before this migration stay as they are: `jobs` reads 1 for them, and their single
-- attempt's times are in duration_ms and wait_ms (which new rows leave NULL). Adding the columns
-- rewrites nothing, and retention removes the old rows in its own time.
ALTER TABLE :SLUICE_SCHEMA.job_stats
  ADD COLUMN jobs integer NOT NULL DEFAULT 1,
  ADD COLUMN durations bigint[],
  ADD COLUMN waits bigint[];

-- A row of the old form stands for one attempt; a row of the new form has one time per attempt
-- in each array. NOT VALID: the rows already there are all of the old form, so there is nothing
-- to check, and skipping the scan keeps this migration instant on a large table.
ALTER TABLE :SLUICE_SCHEMA.job_stats ADD CONSTRAINT job_stats_times_per_job CHECK (
  CASE WHEN durations IS NULL AND waits IS NULL THEN jobs = 1
       ELSE coalesce(cardinality(durations) = jobs AND cardinality(waits) = jobs, false)
            AND duration_ms IS NULL AND wait_ms IS NULL END
) NOT VALID;

-- One row per finished attempt, whichever form it was recorded in: what every percentile reads.
-- The two unnests in the select list run in step (an element of each per attempt) and cost far
-- less per row than a lateral function scan; a condition on finished_at is still applied to the
-- table's scan (BRIN).
CREATE VIEW :SLUICE_SCHEMA.job_stats_runs AS
SELECT s.finished_at, s.name, s.queue, s.status,
       unnest(coalesce(s.durations, ARRAY[s.duration_ms])) AS duration_ms,
       unnest(coalesce(s.waits, ARRAY[s.wait_ms])) AS wait_ms
FROM :SLUICE_SCHEMA.job_stats s;

-- The settle and dead-lettering that write the new form are in functions/settle.sql and
-- functions/dead_letters.sql, applied after the migrations.
