import type { Statement } from '../db/types.js'

/**
 * How far an estimated count may be off: the half-width of its interval of about 95 % (two
 * standard errors of the block sample it is scaled up from); 0 where the count is exact; null where
 * the sample held too few of the state's rows to bound it, the count then being the exact lower
 * bound that the capped count found (shown as "at least").
 */
export interface OverviewMargins {
  ready: number | null
  scheduled: number | null
  retrying: number | null
}

/** One queue's depth in the overview. */
export interface OverviewQueue {
  queue: string
  /** Due now with attempts left (a failed job whose retry is due, and a lapsed lease, included). */
  ready: number
  /** Not due yet, never run (enqueued with a delay or a run time). */
  scheduled: number
  /** Failed, waiting for the next attempt's time. */
  retrying: number
  /** Leased by a drain whose lease has not run out (always exact: read from the leased index). */
  running: number
  /** Waiting in the blocked table for a concurrency slot (always exact). */
  blocked: number
  /** How long the oldest ready job has been due, seconds; 0 when nothing is ready (always exact). */
  oldestReadyAgeSeconds: number
  /** True when ready, scheduled or retrying is an estimate (see `margin`). */
  estimated: boolean
  /** Per state, 0 where exact, else how far the estimate may be off (see OverviewMargins). */
  margin: OverviewMargins
}

export interface OverviewMinute {
  /** The minute's start, ISO 8601 UTC. */
  minute: string
  completed: number
  /** Attempts that failed (to be retried or dead-lettered). */
  failed: number
}

export interface OverviewDrain {
  id: string
  queues: string[]
  startedAt: string
  expiresAt: string
  /** Since the drain started, seconds. */
  ageSeconds: number
  jobsDone: number
}

/** The dashboard's front page, from one statement (`sluice.inspect.overview()`). */
export interface Overview {
  /** The database's clock. */
  now: string
  queues: OverviewQueue[]
  /** The last 60 minutes, oldest first, every minute present (zeros where nothing finished). */
  throughput: OverviewMinute[]
  /** Finished attempts over the same 60 minutes, by status. */
  lastHour: { completed: number; failed: number; dead: number; expired: number }
  /** Dead letters held; `estimated`: the planner's row estimate, the table being too large to count. */
  deadLetters: { count: number; estimated: boolean }
  /** The drains whose lease is live. */
  drains: OverviewDrain[]
}

export interface OverviewLimits {
  /** Tables of at most this many pages (8 KiB) are counted exactly; larger ones as below. */
  exactPages: number
  /**
   * On a larger table, each queue's ready, not-yet-due and retrying jobs are counted exactly from
   * indexes (index-only scans) while each holds at most this many; a state above it is estimated.
   */
  exactRows: number
  /** About this many pages of a large jobs table are sampled (TABLESAMPLE SYSTEM) for the estimates. */
  samplePages: number
}

/**
 * 6,000 pages (48 MiB; the jobs table's pages are filled to 35 %, so some 50,000 to 100,000 jobs)
 * count in a few ms. Above that, up to 2,000 rows per queue and state are counted from indexes
 * (a few ms for eight queues), and larger states are scaled up from 300 sampled pages with their
 * error measured on the same sample (p95 under 100 ms at 1M jobs; 400 pages measured 105).
 */
export const OVERVIEW_LIMITS: OverviewLimits = { exactPages: 6_000, exactRows: 2_000, samplePages: 300 }

/**
 * Every figure of the overview in one statement, whose cost is bounded whatever the table's size.
 *
 * A table of at most `exactPages` is counted. On a larger one, each queue's states are counted
 * exactly from indexes while they are small: the due and not-yet-due jobs of each (queue,
 * priority) range of jobs_ready (and of each admission policy, waiting on jobs_admit and leased
 * on jobs_admitted), and the retrying ones on jobs_retrying, each scan stopping after `exactRows`
 * rows; leased plain jobs (which jobs_ready does not hold) and running jobs (both on
 * jobs_leased), and lapsed last attempts (jobs_last_attempt), are few and counted. Scheduled is
 * the not-yet-due jobs less the running and retrying ones. A state whose count reached the cap
 * is estimated from a block sample (TABLESAMPLE SYSTEM, each block taken with probability p): the
 * Horvitz-Thompson sum of the sampled blocks' counts over p, whose variance is estimated from the
 * same blocks as (1 - p) / p² · Σ y², y the state's rows in a block. That variance grows when a
 * queue's rows are clustered on few pages (loaded by enqueueMany in chunks), so the stated
 * margin, two standard errors, widens exactly where a block sample is weakest. An estimate is
 * never below the exact lower bound the capped scans found.
 *
 * The oldest ready plain job per (queue, priority) comes from the jobs_ready index, a loose scan
 * over the distinct pairs, one probe each; the oldest ready job of an admission policy is the
 * oldest in the sample on a large table. Throughput reads the last hour of job_stats (BRIN on
 * finished_at); the archive is never read.
 */
export function overview(
  t: string,
  schema: string,
  knownQueues: readonly string[],
  limits: OverviewLimits,
): Statement {
  return {
    text: `WITH RECURSIVE rel AS (
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
         count(*) FILTER (WHERE run_at <= now() AND attempts < max_attempts)::float8 AS ready,
         count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts = 0)::float8 AS scheduled,
         count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts > 0)::float8 AS retrying,
         min(run_at) FILTER (WHERE run_at <= now() AND attempts < max_attempts AND policy IS NOT NULL) AS oldest_admitted
  FROM ${t}.jobs TABLESAMPLE SYSTEM ((SELECT percent FROM sampling))
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
  SELECT queue, count(*)::float8 AS running FROM ${t}.jobs
  WHERE lease_token IS NOT NULL AND run_at > now() GROUP BY queue
), lapsed AS (
  -- Last attempts whose lease ran out: due, but with no attempt left (not ready).
  SELECT queue, count(*)::float8 AS lapsed FROM ${t}.jobs
  WHERE lease_token IS NOT NULL AND attempts >= max_attempts AND run_at <= now() GROUP BY queue
), blocked AS (
  SELECT queue, count(*)::float8 AS blocked FROM ${t}.blocked GROUP BY queue
), leased AS (
  -- Leased plain jobs per queue, few and read once on jobs_leased: due (the lease ran out) and
  -- later (running), and the oldest due with attempts left.
  SELECT queue, count(*) FILTER (WHERE run_at <= now())::float8 AS due,
         count(*) FILTER (WHERE run_at > now())::float8 AS later,
         min(run_at) FILTER (WHERE run_at <= now() AND attempts < max_attempts) AS oldest
  FROM ${t}.jobs WHERE lease_token IS NOT NULL AND policy IS NULL GROUP BY queue
), pairs AS (
  -- Every distinct (queue, priority) of the jobs table, one index probe each.
  (SELECT queue, priority FROM ${t}.jobs WHERE policy IS NULL AND lease_token IS NULL ORDER BY queue, priority LIMIT 1)
  UNION ALL
  SELECT nxt.queue, nxt.priority FROM pairs p, LATERAL (
    SELECT j.queue, j.priority FROM ${t}.jobs j
    WHERE j.policy IS NULL AND j.lease_token IS NULL AND (j.queue, j.priority) > (p.queue, p.priority)
    ORDER BY j.queue, j.priority LIMIT 1) nxt
), pair_caps AS (
  -- A queue's cap shared among its priorities, so a queue costs at most about exactRows rows.
  SELECT p.queue, p.priority, ceil($5::float8 / count(*) OVER (PARTITION BY p.queue))::int AS cap
  FROM pairs p WHERE (SELECT large FROM sampling)
), capped AS (
  -- Index-only counts of each range, each stopping one row past its cap: a lower bound of the
  -- range's rows, exact when the cap was not passed. A policy's due and later jobs are one scan.
  SELECT c.queue, least(x.due, c.cap) AS due, least(x.later, c.cap) AS later,
         x.due <= c.cap AS due_exact, x.later <= c.cap AS later_exact
  FROM pair_caps c, LATERAL (SELECT
    (SELECT count(*) FROM (SELECT 1 FROM ${t}.jobs j WHERE j.policy IS NULL AND j.lease_token IS NULL
       AND j.queue = c.queue AND j.priority = c.priority AND j.run_at <= now() LIMIT c.cap + 1) y)::float8 AS due,
    (SELECT count(*) FROM (SELECT 1 FROM ${t}.jobs j WHERE j.policy IS NULL AND j.lease_token IS NULL
       AND j.queue = c.queue AND j.priority = c.priority AND j.run_at > now() LIMIT c.cap + 1) y)::float8 AS later) x
  UNION ALL
  -- Leased plain jobs, which jobs_ready does not hold: due once their lease ran out, later while
  -- it runs (as a policy's leased jobs are counted on jobs_admitted).
  SELECT l.queue, l.due, l.later, true, true FROM leased l WHERE (SELECT large FROM sampling)
  UNION ALL
  -- A policy's jobs: waiting ones on jobs_admit, leased ones on jobs_admitted, each capped.
  SELECT a.queue, x.due, x.later, x.due + x.later <= $5, x.due + x.later <= $5
  FROM ${t}.policies a, LATERAL (
    SELECT count(*) FILTER (WHERE y.run_at <= now())::float8 AS due,
           count(*) FILTER (WHERE y.run_at > now())::float8 AS later
    FROM ((SELECT j.run_at FROM ${t}.jobs j WHERE j.policy = a.name AND j.lease_token IS NULL LIMIT $5 + 1)
          UNION ALL
          (SELECT j.run_at FROM ${t}.jobs j WHERE j.policy = a.name AND j.lease_token IS NOT NULL LIMIT $5 + 1)) y) x
  WHERE (SELECT large FROM sampling)
), exact AS (
  -- Per queue: the sums, each a lower bound of its state, exact when no range passed its cap;
  -- the retrying jobs from their own index, capped alike.
  SELECT c.queue, sum(c.due) AS due, sum(c.later) AS later, bool_and(c.due_exact) AS due_exact,
         bool_and(c.later_exact) AS later_exact,
         (SELECT count(*) FROM (SELECT 1 FROM ${t}.jobs j WHERE j.attempts > 0 AND j.lease_token IS NULL
            AND j.queue = c.queue AND j.run_at > now() LIMIT $5 + 1) y)::float8 AS retrying
  FROM capped c GROUP BY c.queue
), oldest AS (
  SELECT o.queue, min(o.at) AS oldest_ready FROM (
    SELECT p.queue, (
      SELECT j.run_at FROM ${t}.jobs j
      WHERE j.policy IS NULL AND j.lease_token IS NULL AND j.queue = p.queue AND j.priority = p.priority
        AND j.run_at <= now() AND j.attempts < j.max_attempts
      ORDER BY j.run_at LIMIT 1) AS at
    FROM pairs p
    UNION ALL
    -- Plain jobs whose lease ran out (jobs_ready holds no leased job).
    SELECT l.queue, l.oldest FROM leased l) o
  GROUP BY o.queue
), names AS (
  SELECT unnest($1::text[]) AS queue UNION SELECT name FROM ${t}.queues UNION SELECT queue FROM oldest
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
                  greatest(coalesce(e.due, 0) - coalesce(l.lapsed, 0), 0) AS ready_low,
                  coalesce(e.retrying, 0) AS retrying_low,
                  greatest(coalesce(e.later, 0) - coalesce(r.running, 0) - coalesce(e.retrying, 0), 0)
                    AS scheduled_low) low,
  LATERAL (SELECT
    low.small OR coalesce(e.due_exact, true) AS ready_exact,
    low.small OR coalesce(e.retrying, 0) <= $5 AS retrying_exact,
    low.small OR (coalesce(e.later_exact, true) AND coalesce(e.retrying, 0) <= $5) AS scheduled_exact,
    -- A lower bound of scheduled: the later jobs counted, less running and retrying, when the
    -- retrying ones are exact (else nothing is known below).
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
  FROM ${t}.job_stats
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
                    ELSE (SELECT count(*) FROM ${t}.dead_letters) END::float8,
      'estimated', d.pages > $3)
   FROM rel d WHERE d.relname = 'dead_letters') AS "deadLetters",
  (SELECT coalesce(json_agg(json_build_object(
      'id', i.id, 'queues', i.queues, 'startedAt', i.started_at, 'expiresAt', i.expires_at,
      'ageSeconds', extract(epoch FROM now() - i.started_at)::float8, 'jobsDone', i.jobs_done)
      ORDER BY i.started_at, i.id), '[]'::json)
   FROM ${t}.invocations i WHERE i.expires_at > now()) AS drains`,
    values: [knownQueues, schema, limits.exactPages, limits.samplePages, limits.exactRows],
  }
}
