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
  /** Finished attempts over the last hour, by status. */
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
 * 2,000 pages (16 MiB, some 50,000 to 100,000 jobs) count in a few ms; 200 sampled pages give
 * some 10,000 rows, about ±3 % on a state holding a tenth of the jobs.
 */
export const OVERVIEW_LIMITS: OverviewLimits = { exactPages: 2_000, samplePages: 200 }

/**
 * Every figure of the overview in one statement that costs about the same at 1M jobs as at 10.
 * Counting the jobs table's states would scan it, so above `exactPages` they are scaled up from
 * a block sample; the running, blocked and oldest-ready figures stay exact: running from the
 * leased index, the oldest ready job per (queue, priority) from the claim index (a loose scan
 * over the distinct pairs, one probe each), blocked jobs being few. Throughput reads the last
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
  -- Null: count every row. Otherwise the percentage of the jobs table's blocks to read.
  SELECT CASE WHEN pages > $3 THEN least(100, 100.0 * $4 / pages)::real END AS percent
  FROM rel WHERE relname = 'jobs'
), counted AS (
  SELECT queue,
         count(*) FILTER (WHERE run_at <= now() AND attempts < max_attempts)::float8 AS ready,
         count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts = 0)::float8 AS scheduled,
         count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts > 0)::float8 AS retrying,
         false AS estimated
  FROM ${t}.jobs WHERE (SELECT percent FROM sampling) IS NULL
  GROUP BY queue
  UNION ALL
  SELECT queue,
         round(count(*) FILTER (WHERE run_at <= now() AND attempts < max_attempts) * 100 / min(s.percent)),
         round(count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts = 0) * 100 / min(s.percent)),
         round(count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts > 0) * 100 / min(s.percent)),
         true
  FROM ${t}.jobs TABLESAMPLE SYSTEM ((SELECT coalesce(percent, 0) FROM sampling)), sampling s
  WHERE s.percent IS NOT NULL
  GROUP BY queue
), running AS (
  SELECT queue, count(*)::float8 AS running FROM ${t}.jobs
  WHERE lease_token IS NOT NULL AND run_at > now() GROUP BY queue
), blocked AS (
  SELECT queue, count(*)::float8 AS blocked FROM ${t}.blocked GROUP BY queue
), pairs AS (
  -- Every distinct (queue, priority) of the jobs table, one index probe each.
  (SELECT queue, priority FROM ${t}.jobs ORDER BY queue, priority LIMIT 1)
  UNION ALL
  SELECT nxt.queue, nxt.priority FROM pairs p, LATERAL (
    SELECT j.queue, j.priority FROM ${t}.jobs j
    WHERE (j.queue, j.priority) > (p.queue, p.priority)
    ORDER BY j.queue, j.priority LIMIT 1) nxt
), oldest AS (
  SELECT p.queue, min((
    SELECT j.run_at FROM ${t}.jobs j
    WHERE j.queue = p.queue AND j.priority = p.priority AND j.run_at <= now() AND j.attempts < j.max_attempts
    ORDER BY j.run_at LIMIT 1)) AS oldest_ready
  FROM pairs p GROUP BY p.queue
), names AS (
  SELECT unnest($1::text[]) AS queue UNION SELECT name FROM ${t}.queues UNION SELECT queue FROM oldest
  UNION SELECT queue FROM blocked UNION SELECT queue FROM counted
), minutes AS (
  SELECT m FROM generate_series(date_trunc('minute', now()) - interval '59 minutes', date_trunc('minute', now()),
                                interval '1 minute') m
), finished AS (
  SELECT date_trunc('minute', finished_at) AS m,
         count(*) FILTER (WHERE status = 'completed') AS completed,
         count(*) FILTER (WHERE status IN ('failed', 'dead')) AS failed
  FROM ${t}.job_stats
  WHERE finished_at >= date_trunc('minute', now()) - interval '59 minutes'
  GROUP BY 1
), hour AS (
  SELECT count(*) FILTER (WHERE status = 'completed')::float8 AS completed,
         count(*) FILTER (WHERE status = 'failed')::float8 AS failed,
         count(*) FILTER (WHERE status = 'dead')::float8 AS dead,
         count(*) FILTER (WHERE status = 'expired')::float8 AS expired
  FROM ${t}.job_stats WHERE finished_at > now() - interval '1 hour'
)
SELECT to_json(now()) #>> '{}' AS now,
  (SELECT coalesce(json_agg(json_build_object(
      'queue', n.queue, 'ready', coalesce(c.ready, 0), 'scheduled', coalesce(c.scheduled, 0),
      'retrying', coalesce(c.retrying, 0), 'running', coalesce(r.running, 0), 'blocked', coalesce(b.blocked, 0),
      'oldestReadyAgeSeconds', coalesce(greatest(extract(epoch FROM now() - o.oldest_ready), 0), 0)::float8,
      'estimated', (SELECT percent IS NOT NULL FROM sampling)) ORDER BY n.queue), '[]'::json)
   FROM names n LEFT JOIN counted c ON c.queue = n.queue LEFT JOIN running r ON r.queue = n.queue
   LEFT JOIN blocked b ON b.queue = n.queue LEFT JOIN oldest o ON o.queue = n.queue) AS queues,
  (SELECT json_agg(json_build_object(
      'minute', to_char(m.m AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:00"Z"'),
      'completed', coalesce(f.completed, 0), 'failed', coalesce(f.failed, 0)) ORDER BY m.m)
   FROM minutes m LEFT JOIN finished f ON f.m = m.m) AS throughput,
  (SELECT row_to_json(hour) FROM hour) AS "lastHour",
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
