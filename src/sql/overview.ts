import type { Statement } from '../db/types.js'

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
  /** True when ready, scheduled and retrying are scaled up from a sample of the jobs table. */
  estimated: boolean
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
  /** Tables of at most this many pages (8 KiB) are counted exactly; larger ones are estimated. */
  exactPages: number
  /** About this many pages of a large jobs table are sampled (TABLESAMPLE SYSTEM). */
  samplePages: number
}

/**
 * 2,000 pages (16 MiB, some 50,000 to 100,000 jobs) count in a few ms; 100 sampled pages give
 * some 5,000 to 7,000 rows, about ±5 % on a state holding a tenth of the jobs.
 */
export const OVERVIEW_LIMITS: OverviewLimits = { exactPages: 2_000, samplePages: 100 }

/**
 * Every figure of the overview in one statement that costs about the same at 1M jobs as at 10.
 * Counting the jobs table's states would scan it, so above `exactPages` they are scaled up from
 * a block sample; the running and blocked figures stay exact (the leased index; blocked jobs
 * are few), and so does the oldest ready plain job: per (queue, priority), from the jobs_ready
 * index, a loose scan over the distinct pairs, one probe each. The oldest ready job of an
 * admission policy is the oldest in the sample on a large table (jobs_admit is ordered by
 * partition, which would take a probe per partition). Throughput reads the last
 * hour of job_stats (BRIN on finished_at); the archive is never read.
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
  -- The percentage of the jobs table's blocks to read: all of a small table (a sample scan of
  -- 100 % is a plain scan, and never a parallel one whose workers would cost more than it).
  SELECT CASE WHEN pages > $3 THEN least(100, 100.0 * $4 / pages)::real ELSE 100 END AS percent
  FROM rel WHERE relname = 'jobs'
), counted AS (
  SELECT queue,
         round(count(*) FILTER (WHERE run_at <= now() AND attempts < max_attempts) * 100 / min(s.percent)) AS ready,
         round(count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts = 0) * 100 / min(s.percent))
           AS scheduled,
         round(count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts > 0) * 100 / min(s.percent))
           AS retrying,
         min(run_at) FILTER (WHERE run_at <= now() AND attempts < max_attempts AND policy IS NOT NULL) AS oldest_admitted
  FROM ${t}.jobs TABLESAMPLE SYSTEM ((SELECT percent FROM sampling)), sampling s
  GROUP BY queue
), running AS (
  SELECT queue, count(*)::float8 AS running FROM ${t}.jobs
  WHERE lease_token IS NOT NULL AND run_at > now() GROUP BY queue
), blocked AS (
  SELECT queue, count(*)::float8 AS blocked FROM ${t}.blocked GROUP BY queue
), pairs AS (
  -- Every distinct (queue, priority) of the jobs table, one index probe each.
  (SELECT queue, priority FROM ${t}.jobs WHERE policy IS NULL ORDER BY queue, priority LIMIT 1)
  UNION ALL
  SELECT nxt.queue, nxt.priority FROM pairs p, LATERAL (
    SELECT j.queue, j.priority FROM ${t}.jobs j
    WHERE j.policy IS NULL AND (j.queue, j.priority) > (p.queue, p.priority)
    ORDER BY j.queue, j.priority LIMIT 1) nxt
), oldest AS (
  SELECT p.queue, min((
    SELECT j.run_at FROM ${t}.jobs j
    WHERE j.policy IS NULL AND j.queue = p.queue AND j.priority = p.priority AND j.run_at <= now()
      AND j.attempts < j.max_attempts
    ORDER BY j.run_at LIMIT 1)) AS oldest_ready
  FROM pairs p GROUP BY p.queue
), names AS (
  SELECT unnest($1::text[]) AS queue UNION SELECT name FROM ${t}.queues UNION SELECT queue FROM oldest
  UNION SELECT queue FROM blocked UNION SELECT queue FROM counted
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
      'queue', n.queue, 'ready', coalesce(c.ready, 0), 'scheduled', coalesce(c.scheduled, 0),
      'retrying', coalesce(c.retrying, 0), 'running', coalesce(r.running, 0), 'blocked', coalesce(b.blocked, 0),
      'oldestReadyAgeSeconds',
        coalesce(greatest(extract(epoch FROM now() - least(o.oldest_ready, c.oldest_admitted)), 0), 0)::float8,
      'estimated', (SELECT pages > $3 FROM rel WHERE relname = 'jobs')) ORDER BY n.queue), '[]'::json)
   FROM names n LEFT JOIN counted c ON c.queue = n.queue LEFT JOIN running r ON r.queue = n.queue
   LEFT JOIN blocked b ON b.queue = n.queue LEFT JOIN oldest o ON o.queue = n.queue) AS queues,
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
    values: [knownQueues, schema, limits.exactPages, limits.samplePages],
  }
}
