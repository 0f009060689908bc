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

/** Throughput per minute, status counts, slowest job names and a summary, in one statement. */
export function jobStats(t: string, sinceMs: number, slowest: number, queue: string | null): Statement {
  return {
    text: `WITH s AS (
  SELECT * FROM ${t}.job_stats
  WHERE finished_at > now() - $1::bigint * interval '1 millisecond' AND ($3::text IS NULL OR queue = $3)
)
SELECT jsonb_build_object(
  'finished', count(*),
  'completed', count(*) FILTER (WHERE status = 'completed'),
  'failed', count(*) FILTER (WHERE status = 'failed'),
  'dead', count(*) FILTER (WHERE status = 'dead'),
  'expired', count(*) FILTER (WHERE status = 'expired'),
  'successRate', (count(*) FILTER (WHERE status = 'completed'))::float8
                 / nullif(count(*) FILTER (WHERE status IN ('completed', 'failed', 'dead')), 0),
  'avgDurationMs', round(avg(duration_ms)),
  'p95DurationMs', percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms),
  'avgWaitMs', round(avg(wait_ms)),
  'p95WaitMs', percentile_disc(0.95) WITHIN GROUP (ORDER BY wait_ms)
) AS summary,
(SELECT coalesce(jsonb_agg(m ORDER BY m->>'minute'), '[]') FROM (
  SELECT jsonb_build_object('minute', to_char(date_trunc('minute', finished_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:00"Z"'),
    'completed', count(*) FILTER (WHERE status = 'completed'), 'failed', count(*) FILTER (WHERE status = 'failed'),
    'dead', count(*) FILTER (WHERE status = 'dead'), 'expired', count(*) FILTER (WHERE status = 'expired')) AS m
  FROM s GROUP BY date_trunc('minute', finished_at)) per_minute) AS throughput,
(SELECT coalesce(jsonb_agg(x ORDER BY (x->>'p95DurationMs')::float8 DESC), '[]') FROM (
  SELECT jsonb_build_object('name', name, 'runs', count(*), 'avgDurationMs', round(avg(duration_ms)),
    'p95DurationMs', percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms), 'maxDurationMs', max(duration_ms)) AS x
  FROM s WHERE duration_ms IS NOT NULL GROUP BY name
  ORDER BY percentile_disc(0.95) WITHIN GROUP (ORDER BY duration_ms) DESC LIMIT $2) top) AS slowest
FROM s`,
    values: [sinceMs, slowest, queue],
  }
}
