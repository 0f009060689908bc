import type { Statement } from '../db/types.js'

/**
 * Takes the slot of every due task in one statement. A task is due when its
 * next_run_at has passed (or it never ran); the winner moves next_run_at forward
 * by the task's interval, so an overlapping or duplicated call finds nothing due.
 */
export function claimTasks(t: string, tasks: readonly { name: string; intervalMs: number }[]): Statement {
  return {
    text: `INSERT INTO ${t}.maintenance AS m (task, next_run_at)
SELECT task, now() + every * interval '1 millisecond'
FROM unnest($1::text[], $2::bigint[]) AS d(task, every)
ON CONFLICT (task) DO UPDATE
SET next_run_at = excluded.next_run_at, last_started_at = now()
WHERE m.next_run_at <= now()
RETURNING task`,
    values: [tasks.map((task) => task.name), tasks.map((task) => task.intervalMs)],
  }
}

export function recordTask(t: string, task: string, rows: number | null, error: string | null): Statement {
  return {
    text: `UPDATE ${t}.maintenance SET last_rows = $2, last_error = $3 WHERE task = $1`,
    values: [task, rows, error],
  }
}

/** Deletes invocation leases that ran out (their drain died or was frozen). */
export function reapInvocations(t: string): Statement {
  return {
    text: `WITH gone AS (DELETE FROM ${t}.invocations WHERE expires_at < now() RETURNING 1)
SELECT count(*)::int AS n FROM gone`,
    values: [],
  }
}

/**
 * Dead-letters jobs whose last attempt never settled: the lease ran out with no attempts
 * left, typically because the handler crashed or timed out the function every time.
 */
export function buryExhausted(t: string, limit: number): Statement {
  return {
    text: `WITH dead AS (
  DELETE FROM ${t}.jobs j
  WHERE j.id IN (
    SELECT id FROM ${t}.jobs
    WHERE lease_token IS NOT NULL AND run_at <= now() AND attempts >= max_attempts
    ORDER BY run_at LIMIT $1 FOR UPDATE SKIP LOCKED
  )
  RETURNING j.*
), buried AS (
  INSERT INTO ${t}.dead_letters (id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, last_error, errors)
  SELECT id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, e,
         jsonb_path_query_array(errors || jsonb_build_array(e), '$[last - 9 to last]')
  FROM (SELECT d.*, jsonb_build_object('name', 'LeaseExpired', 'attempt', d.attempts, 'at', now(),
          'message', 'The lease of the last attempt ran out before it was settled (the drain crashed or timed out)') AS e
        FROM dead d) x
  ON CONFLICT (id) DO UPDATE SET attempts = excluded.attempts, failed_at = now(), last_error = excluded.last_error,
    errors = excluded.errors
  RETURNING 1
)
SELECT count(*)::int AS n FROM buried`,
    values: [limit],
  }
}

/** Deletes archived jobs older than the retention, at most `limit` per call. */
export function pruneArchive(t: string, retentionMs: number, limit: number): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.archive
  WHERE id IN (SELECT id FROM ${t}.archive WHERE finished_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`,
    values: [retentionMs, limit],
  }
}
