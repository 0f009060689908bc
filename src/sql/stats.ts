import type { Statement } from '../db/types.js'

export interface JobStats {
  /** The window the figures cover, ending now. */
  sinceMs: number
  summary: {
    finished: number
    completed: number
    failed: number
    dead: number
    expired: number
    /** completed / (completed + failed + dead), 0..1; null when nothing ran. */
    successRate: number | null
    avgDurationMs: number | null
    p95DurationMs: number | null
    avgWaitMs: number | null
    p95WaitMs: number | null
  }
  /** Finished attempts per status. */
  statusCounts: Record<'completed' | 'failed' | 'dead' | 'expired', number>
  /** Per minute, oldest first. */
  throughput: { minute: string; completed: number; failed: number; dead: number; expired: number }[]
  /** Job names by 95th-percentile duration, slowest first. */
  slowest: {
    name: string
    runs: number
    avgDurationMs: number
    p95DurationMs: number
    maxDurationMs: number
  }[]
}

/**
 * Throughput per minute, status counts, slowest job names and a summary, in one statement.
 * Counts add up job_stats' `jobs` (a row per name, queue and status per settle); run and wait
 * times come from job_stats_runs, one row per attempt, so averages and percentiles are exact.
 */
export function jobStats(t: string, sinceMs: number, slowest: number, queue: string | null): Statement {
  return {
    text: `WITH s AS (
  SELECT finished_at, status, jobs FROM ${t}.job_stats
  WHERE finished_at > now() - $1::bigint * interval '1 millisecond' AND ($3::text IS NULL OR queue = $3)
), runs AS (
  SELECT name, duration_ms, wait_ms FROM ${t}.job_stats_runs
  WHERE finished_at > now() - $1::bigint * interval '1 millisecond' AND ($3::text IS NULL OR queue = $3)
), counts AS (
  SELECT coalesce(sum(jobs), 0) AS finished,
         coalesce(sum(jobs) FILTER (WHERE status = 'completed'), 0) AS completed,
         coalesce(sum(jobs) FILTER (WHERE status = 'failed'), 0) AS failed,
         coalesce(sum(jobs) FILTER (WHERE status = 'dead'), 0) AS dead,
         coalesce(sum(jobs) FILTER (WHERE status = 'expired'), 0) AS expired
  FROM s
), times AS (
  SELECT round(avg(duration_ms)) AS avg_duration,
         percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95_duration,
         round(avg(wait_ms)) AS avg_wait,
         percentile_disc(0.95) WITHIN GROUP (ORDER BY wait_ms) AS p95_wait
  FROM runs
)
SELECT jsonb_build_object(
  'finished', c.finished,
  'completed', c.completed,
  'failed', c.failed,
  'dead', c.dead,
  'expired', c.expired,
  'successRate', c.completed::float8 / nullif(c.completed + c.failed + c.dead, 0),
  'avgDurationMs', m.avg_duration,
  'p95DurationMs', m.p95_duration,
  'avgWaitMs', m.avg_wait,
  'p95WaitMs', m.p95_wait
) AS summary,
(SELECT coalesce(jsonb_agg(m ORDER BY m->>'minute'), '[]') FROM (
  SELECT jsonb_build_object('minute', to_char(date_trunc('minute', finished_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:00"Z"'),
    'completed', coalesce(sum(jobs) FILTER (WHERE status = 'completed'), 0),
    'failed', coalesce(sum(jobs) FILTER (WHERE status = 'failed'), 0),
    'dead', coalesce(sum(jobs) FILTER (WHERE status = 'dead'), 0),
    'expired', coalesce(sum(jobs) FILTER (WHERE status = 'expired'), 0)) AS m
  FROM s GROUP BY date_trunc('minute', finished_at)) per_minute) AS throughput,
(SELECT coalesce(jsonb_agg(x ORDER BY (x->>'p95DurationMs')::float8 DESC), '[]') FROM (
  SELECT jsonb_build_object('name', name, 'runs', count(*), 'avgDurationMs', round(avg(duration_ms)),
    'p95DurationMs', percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms), 'maxDurationMs', max(duration_ms)) AS x
  FROM runs WHERE duration_ms IS NOT NULL GROUP BY name
  ORDER BY percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms) DESC LIMIT $2) top) AS slowest
FROM counts c, times m`,
    values: [sinceMs, slowest, queue],
  }
}
