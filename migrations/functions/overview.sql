-- The dashboard's overview, `sluice.inspect.overview()`: every figure in one statement whose cost is
-- bounded whatever the jobs table's size. src/sql/overview.ts describes the method (exact counts
-- on indexes while a state is small, a block sample above that) and types the answer.
--
-- A function so that it runs with JIT off, as the claim's and the settle's do. Its capped counts
-- stop at a per-row limit the planner cannot see, so at a large backlog it estimates them as
-- scans of the whole range: with 1M jobs in one queue the statement's estimate passed
-- jit_above_cost, and PostgreSQL spent 2.4 s compiling a read that runs in a few ms.
-- $1 the app's queues, $2 the schema, $3 the pages up to which the jobs table is counted, $4 the
-- pages sampled above that, $5 the rows counted exactly per queue and state.
CREATE OR REPLACE FUNCTION :SLUICE_SCHEMA.overview(
  p_queues text[], p_schema text, p_exact_pages integer, p_sample_pages integer, p_exact_rows integer
)
RETURNS TABLE (now text, queues json, throughput json, "lastHour" json, "deadLetters" json, drains json)
LANGUAGE sql
SET jit = off
AS $fn$
WITH RECURSIVE rel AS (
  SELECT c.relname, c.reltuples, pg_relation_size(c.oid) / current_setting('block_size')::bigint AS pages
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = $2 AND c.relname IN ('jobs', 'dead_letters')
), sampling AS (
  -- The fraction of the jobs table's blocks to read: all of a small table (a sample scan of
  -- 100 % is a plain scan, and never a parallel one whose workers would cost more than it).
  SELECT pages > $3 AS large,
         CASE WHEN pages > $3 THEN least(100, 100.0 * $4 / pages)::real ELSE 100 END AS percent
  FROM rel WHERE relname = 'jobs'
), blocks AS (
  -- Each sampled block's rows per queue and state.
  -- (A counted table is one stratum: no block needed, and no ctid read per row.)
  SELECT queue, CASE WHEN (SELECT large FROM sampling) THEN (ctid::text::point)[0] END AS block,
         count(*) FILTER (WHERE run_at <= now() AND attempts < max_attempts
                          AND (lease_token IS NULL OR lease_until <= now()))::float8 AS ready,
         count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND last_error IS NULL)::float8 AS scheduled,
         count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND last_error IS NOT NULL)::float8 AS retrying,
         min(run_at) FILTER (WHERE run_at <= now() AND attempts < max_attempts AND policy IS NOT NULL
                             AND (lease_token IS NULL OR lease_until <= now())) AS oldest_admitted
  FROM :SLUICE_SCHEMA.jobs TABLESAMPLE SYSTEM ((SELECT percent FROM sampling))
  GROUP BY 1, 2
), sampled AS (
  -- Horvitz-Thompson: a block taken with probability p stands for 1/p blocks; the variance of
  -- that sum is estimated by (1 - p) / p² times the sum of the squared block counts.
  SELECT b.queue, sum(b.ready) / s.p AS ready, sum(b.scheduled) / s.p AS scheduled,
         sum(b.retrying) / s.p AS retrying,
         (1 - s.p) / (s.p * s.p) * sum(b.ready * b.ready) AS ready_var,
         (1 - s.p) / (s.p * s.p) * sum(b.scheduled * b.scheduled) AS scheduled_var,
         (1 - s.p) / (s.p * s.p) * sum(b.retrying * b.retrying) AS retrying_var,
         min(b.oldest_admitted) AS oldest_admitted
  FROM blocks b, (SELECT percent::float8 / 100 AS p FROM sampling) s
  GROUP BY b.queue, s.p
), running AS (
  -- The jobs in flight, few and read on their lease rows (the view leased_jobs).
  SELECT queue, count(*)::float8 AS running FROM :SLUICE_SCHEMA.leased_jobs
  WHERE lease_until > now() GROUP BY queue
), lapsed AS (
  -- Last attempts whose lease ran out: due, but with no attempt left (not ready).
  SELECT queue, count(*)::float8 AS lapsed FROM :SLUICE_SCHEMA.leased_jobs
  WHERE attempts >= max_attempts AND lease_until <= now() GROUP BY queue
), blocked AS (
  SELECT queue, count(*)::float8 AS blocked FROM :SLUICE_SCHEMA.blocked GROUP BY queue
), pairs AS (
  -- Every distinct (queue, priority) of the jobs table, one index probe each.
  (SELECT queue, priority FROM :SLUICE_SCHEMA.jobs WHERE policy IS NULL ORDER BY queue, priority LIMIT 1)
  UNION ALL
  SELECT nxt.queue, nxt.priority FROM pairs p, LATERAL (
    SELECT j.queue, j.priority FROM :SLUICE_SCHEMA.jobs j
    WHERE j.policy IS NULL AND (j.queue, j.priority) > (p.queue, p.priority)
    ORDER BY j.queue, j.priority LIMIT 1) nxt
), pair_caps AS (
  -- A queue's cap shared among its priorities, so a queue costs at most about exactRows rows.
  SELECT p.queue, p.priority, ceil($5::float8 / count(*) OVER (PARTITION BY p.queue))::int AS cap
  FROM pairs p WHERE (SELECT large FROM sampling)
), capped AS (
  -- Index-only counts of each range, each stopping one row past its cap: a lower bound of the
  -- range's rows, exact when the cap was not passed. A policy's due and later jobs are one scan.
  -- The ranges hold the leased jobs too, all due (a lease keeps its job's place): the running and
  -- lapsed ones are taken off the due count below.
  SELECT c.queue, least(x.due, c.cap) AS due, least(x.later, c.cap) AS later,
         x.due <= c.cap AS due_exact, x.later <= c.cap AS later_exact
  FROM pair_caps c, LATERAL (SELECT
    (SELECT count(*) FROM (SELECT 1 FROM :SLUICE_SCHEMA.jobs j WHERE j.policy IS NULL
       AND j.queue = c.queue AND j.priority = c.priority AND j.run_at <= now() LIMIT c.cap + 1) y)::float8 AS due,
    (SELECT count(*) FROM (SELECT 1 FROM :SLUICE_SCHEMA.jobs j WHERE j.policy IS NULL
       AND j.queue = c.queue AND j.priority = c.priority AND j.run_at > now() LIMIT c.cap + 1) y)::float8 AS later) x
  UNION ALL
  -- A policy's jobs on jobs_admit, capped.
  SELECT a.queue, x.due, x.later, x.due + x.later <= $5, x.due + x.later <= $5
  FROM :SLUICE_SCHEMA.policies a, LATERAL (
    SELECT count(*) FILTER (WHERE y.run_at <= now())::float8 AS due,
           count(*) FILTER (WHERE y.run_at > now())::float8 AS later
    FROM (SELECT j.run_at FROM :SLUICE_SCHEMA.jobs j WHERE j.policy = a.name LIMIT $5 + 1) y) x
  WHERE (SELECT large FROM sampling)
), exact AS (
  -- Per queue: the sums, each a lower bound of its state, exact when no range passed its cap;
  -- the retrying jobs from their own index, capped alike.
  SELECT c.queue, sum(c.due) AS due, sum(c.later) AS later, bool_and(c.due_exact) AS due_exact,
         bool_and(c.later_exact) AS later_exact,
         (SELECT count(*) FROM (SELECT 1 FROM :SLUICE_SCHEMA.jobs j WHERE j.last_error IS NOT NULL
            AND j.lease_token IS NULL AND j.queue = c.queue AND j.run_at > now() LIMIT $5 + 1) y)::float8 AS retrying
  FROM capped c GROUP BY c.queue
), oldest AS (
  SELECT o.queue, min(o.at) AS oldest_ready FROM (
    SELECT p.queue, (
      SELECT j.run_at FROM :SLUICE_SCHEMA.jobs j
      WHERE j.policy IS NULL AND j.queue = p.queue AND j.priority = p.priority
        AND j.run_at <= now() AND j.attempts < j.max_attempts AND (j.lease_token IS NULL OR j.lease_until <= now())
      ORDER BY j.run_at LIMIT 1) AS at
    FROM pairs p) o
  GROUP BY o.queue
), names AS (
  SELECT unnest($1::text[]) AS queue UNION SELECT name FROM :SLUICE_SCHEMA.queues UNION SELECT queue FROM oldest
  UNION SELECT queue FROM blocked UNION SELECT queue FROM sampled UNION SELECT queue FROM exact
  UNION SELECT queue FROM running
), depth AS (
  -- Each state: exact on a small table or below its cap; else the estimate, never below the
  -- exact lower bound, with its margin (null where the sample saw too little of it to bound it).
  SELECT n.queue, coalesce(r.running, 0) AS running, coalesce(b.blocked, 0) AS blocked,
         coalesce(greatest(extract(epoch FROM now() - least(o.oldest_ready, s.oldest_admitted)), 0), 0)::float8
           AS oldest,
         x.*, est.*
  FROM names n
  LEFT JOIN sampled s ON s.queue = n.queue LEFT JOIN exact e ON e.queue = n.queue
  LEFT JOIN running r ON r.queue = n.queue LEFT JOIN lapsed l ON l.queue = n.queue
  LEFT JOIN blocked b ON b.queue = n.queue LEFT JOIN oldest o ON o.queue = n.queue,
  LATERAL (SELECT NOT (SELECT large FROM sampling) AS small,
                  greatest(coalesce(e.due, 0) - coalesce(r.running, 0) - coalesce(l.lapsed, 0), 0) AS ready_low,
                  coalesce(e.retrying, 0) AS retrying_low,
                  greatest(coalesce(e.later, 0) - coalesce(e.retrying, 0), 0) AS scheduled_low) low,
  LATERAL (SELECT
    low.small OR coalesce(e.due_exact, true) AS ready_exact,
    low.small OR coalesce(e.retrying, 0) <= $5 AS retrying_exact,
    low.small OR (coalesce(e.later_exact, true) AND coalesce(e.retrying, 0) <= $5) AS scheduled_exact,
    -- A lower bound of scheduled: the later jobs counted, less the retrying ones, when those are
    -- exact (else nothing is known below).
    CASE WHEN coalesce(e.retrying, 0) <= $5 THEN low.scheduled_low ELSE 0 END AS scheduled_floor) x,
  LATERAL (SELECT
    CASE WHEN low.small THEN coalesce(s.ready, 0) WHEN x.ready_exact THEN low.ready_low
         ELSE greatest(coalesce(s.ready, 0), low.ready_low) END AS ready,
    CASE WHEN low.small THEN coalesce(s.scheduled, 0) WHEN x.scheduled_exact THEN low.scheduled_low
         ELSE greatest(coalesce(s.scheduled, 0), x.scheduled_floor) END AS scheduled,
    CASE WHEN low.small THEN coalesce(s.retrying, 0) WHEN x.retrying_exact THEN low.retrying_low
         ELSE greatest(coalesce(s.retrying, 0), low.retrying_low) END AS retrying,
    CASE WHEN x.ready_exact THEN 0 WHEN coalesce(s.ready, 0) <= low.ready_low THEN NULL
         ELSE round(2 * sqrt(s.ready_var)) END AS ready_margin,
    CASE WHEN x.scheduled_exact THEN 0 WHEN coalesce(s.scheduled, 0) <= x.scheduled_floor THEN NULL
         ELSE round(2 * sqrt(s.scheduled_var)) END AS scheduled_margin,
    CASE WHEN x.retrying_exact THEN 0 WHEN coalesce(s.retrying, 0) <= low.retrying_low THEN NULL
         ELSE round(2 * sqrt(s.retrying_var)) END AS retrying_margin) est
), minutes AS (
  SELECT m FROM generate_series(date_bin('1 minute', now(), '2000-01-01'::timestamptz) - interval '59 minutes',
                                date_bin('1 minute', now(), '2000-01-01'::timestamptz), interval '1 minute') m
), finished AS (
  -- One read of the hour's job stats (BRIN on finished_at), per minute and status; a row counts
  -- the jobs of one settle.
  SELECT date_bin('1 minute', finished_at, '2000-01-01'::timestamptz) AS m, status, sum(jobs)::float8 AS n
  FROM :SLUICE_SCHEMA.job_stats
  WHERE finished_at >= date_bin('1 minute', now(), '2000-01-01'::timestamptz) - interval '59 minutes'
  GROUP BY 1, 2
), per_minute AS (
  SELECT m, sum(n) FILTER (WHERE status = 'completed') AS completed,
         sum(n) FILTER (WHERE status IN ('failed', 'dead')) AS failed
  FROM finished GROUP BY m
)
SELECT to_json(now()) #>> '{}' AS now,
  (SELECT coalesce(json_agg(json_build_object(
      'queue', d.queue, 'ready', round(d.ready), 'scheduled', round(d.scheduled), 'retrying', round(d.retrying),
      'running', d.running, 'blocked', d.blocked, 'oldestReadyAgeSeconds', d.oldest,
      'estimated', NOT (d.ready_exact AND d.scheduled_exact AND d.retrying_exact),
      'margin', json_build_object('ready', d.ready_margin, 'scheduled', d.scheduled_margin,
                                  'retrying', d.retrying_margin)) ORDER BY d.queue), '[]'::json)
   FROM depth d) AS queues,
  (SELECT json_agg(json_build_object(
      'minute', to_char(m.m AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:00"Z"'),
      'completed', coalesce(f.completed, 0), 'failed', coalesce(f.failed, 0)) ORDER BY m.m)
   FROM minutes m LEFT JOIN per_minute f ON f.m = m.m) AS throughput,
  (SELECT json_build_object(
      'completed', coalesce(sum(n) FILTER (WHERE status = 'completed'), 0),
      'failed', coalesce(sum(n) FILTER (WHERE status = 'failed'), 0),
      'dead', coalesce(sum(n) FILTER (WHERE status = 'dead'), 0),
      'expired', coalesce(sum(n) FILTER (WHERE status = 'expired'), 0))
   FROM finished) AS "lastHour",
  (SELECT json_build_object(
      'count', CASE WHEN d.pages > $3 THEN greatest(d.reltuples, 0)
                    ELSE (SELECT count(*) FROM :SLUICE_SCHEMA.dead_letters) END::float8,
      'estimated', d.pages > $3)
   FROM rel d WHERE d.relname = 'dead_letters') AS "deadLetters",
  (SELECT coalesce(json_agg(json_build_object(
      'id', i.id, 'queues', i.queues, 'startedAt', i.started_at, 'expiresAt', i.expires_at,
      'ageSeconds', extract(epoch FROM now() - i.started_at)::float8, 'jobsDone', i.jobs_done)
      ORDER BY i.started_at, i.id), '[]'::json)
   FROM :SLUICE_SCHEMA.invocations i WHERE i.expires_at > now()) AS drains
$fn$;
