import type { Statement } from '../db/types.js'

/**
 * Wraps an enqueue statement so that the same statement also says whether to wake the
 * queue's drains: true for the first enqueue of a debounce window. The window's row is
 * created without a lock (DO NOTHING) and bumped only when stale, so busy queues take no row
 * lock per enqueue.
 */
export function withWake(schema: string, statement: Statement, queue: string, debounceMs: number): Statement {
  const q = statement.values.length + 1
  const d = q + 1
  return {
    text: `WITH enq AS (
${statement.text}
), seed AS (
  INSERT INTO ${schema}.wakeups (queue, last_at) VALUES ($${q}, now()) ON CONFLICT (queue) DO NOTHING RETURNING 1
), bump AS (
  UPDATE ${schema}.wakeups SET last_at = now()
  WHERE queue = $${q} AND last_at < now() - $${d}::bigint * interval '1 millisecond'
  RETURNING 1
)
SELECT enq.*, (EXISTS (SELECT 1 FROM seed) OR EXISTS (SELECT 1 FROM bump)) AS wake FROM enq`,
    values: [...statement.values, queue, debounceMs],
  }
}

/**
 * Of `queues`, those whose debounce window this opens (as withWake does for an enqueue's queue),
 * each window marked: the queues to wake.
 */
export function wakeWindows(schema: string, queues: readonly string[], debounceMs: number): Statement {
  return {
    text: `WITH q AS (
  SELECT DISTINCT unnest($1::text[]) AS queue
), seed AS (
  INSERT INTO ${schema}.wakeups (queue, last_at) SELECT queue, now() FROM q ON CONFLICT (queue) DO NOTHING RETURNING queue
), bump AS (
  UPDATE ${schema}.wakeups w SET last_at = now()
  FROM q WHERE w.queue = q.queue AND w.last_at < now() - $2::bigint * interval '1 millisecond'
  RETURNING w.queue
)
SELECT queue FROM seed UNION SELECT queue FROM bump`,
    values: [queues, debounceMs],
  }
}

/** Due backlog per queue (plain jobs, and admissible policy jobs), counted up to `cap`, for queues with any. */
export function readyBacklog(t: string, queues: readonly string[], cap: number): Statement {
  return {
    text: `SELECT q.queue, r.n FROM unnest($1::text[]) AS q(queue)
CROSS JOIN LATERAL (SELECT ${t}.queue_ready(ARRAY[q.queue], $2) AS n) r
LEFT JOIN ${t}.queues c ON c.name = q.queue
WHERE r.n > 0 AND NOT coalesce(c.paused, false)
  AND coalesce(c.breaker_until, '-infinity') <= now()`,
    values: [queues, cap],
  }
}
