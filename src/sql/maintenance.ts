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
 * left, typically because the handler crashed or timed out the function every time. Their
 * slots, locks and batch counts are released as for any dead letter.
 */
export function buryExhausted(t: string, limit: number): Statement {
  return { text: `SELECT ${t}.bury_exhausted($1) AS n`, values: [limit] }
}

/** Deletes archived jobs older than the retention, at most `limit` per call, with their steps. */
export function pruneArchive(t: string, retentionMs: number, limit: number): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.archive
  WHERE id IN (SELECT id FROM ${t}.archive WHERE finished_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)
  RETURNING id
), steps AS (
  DELETE FROM ${t}.job_steps s USING gone WHERE s.job_id = gone.id
)
SELECT count(*)::int AS n FROM gone`,
    values: [retentionMs, limit],
  }
}

/**
 * Deletes event-log entries older than `keepMs`, at most `limit` per call. The log only serves
 * event waits recorded in a run that started before their event (docs/steps.md): it must keep
 * events for longer than any run lasts.
 */
export function pruneEventLog(t: string, keepMs: number, limit: number): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.event_log
  WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${t}.event_log
                          WHERE logged_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2))
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`,
    values: [keepMs, limit],
  }
}
