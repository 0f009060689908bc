import type { Statement } from '../db/types.js'

/**
 * The two CTEs, `seed` and `bump`, that open a debounce window for each queue of `source` (a CTE
 * or a FROM item aliased `source`, with a `queue` column) and return the queues whose window they
 * opened: the first write of a window wakes the queue's drains. The window's row is created
 * without a lock (DO NOTHING) and bumped only when stale, so busy queues take no row lock per
 * write. `debounce` is the SQL of the window's length, ms.
 */
export function wakeWindowCtes(schema: string, source: string, debounce: string): string {
  return `seed AS (
  INSERT INTO ${schema}.wakeups (queue, last_at) SELECT queue, now() FROM ${source} ON CONFLICT (queue) DO NOTHING RETURNING queue
), bump AS (
  UPDATE ${schema}.wakeups w SET last_at = now()
  FROM ${source} WHERE w.queue = source.queue AND w.last_at < now() - ${debounce}::bigint * interval '1 millisecond'
  RETURNING w.queue
)`
}

/** Whether a write's one queue opened its window (with wakeWindowCtes in the statement). */
export const WAKE_OPENED = '(EXISTS (SELECT 1 FROM seed) OR EXISTS (SELECT 1 FROM bump))'

/**
 * Wraps an enqueue statement so that the same statement also says whether to wake the
 * queue's drains: true for the first enqueue of a debounce window (wakeWindowCtes).
 */
export function withWake(schema: string, statement: Statement, queue: string, debounceMs: number): Statement {
  const q = statement.values.length + 1
  return {
    text: `WITH enq AS (
${statement.text}
), source AS (
  SELECT $${q}::text AS queue
), ${wakeWindowCtes(schema, 'source', `$${q + 1}`)}
SELECT enq.*, ${WAKE_OPENED} AS wake FROM enq`,
    values: [...statement.values, queue, debounceMs],
  }
}

/** Of `queues`, those whose debounce window this opens (wakeWindowCtes), each window marked: the queues to wake. */
export function wakeWindows(schema: string, queues: readonly string[], debounceMs: number): Statement {
  return {
    text: `WITH source AS (
  SELECT DISTINCT unnest($1::text[]) AS queue
), ${wakeWindowCtes(schema, 'source', '$2')}
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
