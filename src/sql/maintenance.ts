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

/**
 * Deletes archived jobs older than the retention with their steps: whole archive rows (each the
 * jobs one settle ended in a range of ids, migration 0023), as many as hold at most `limit` jobs
 * (at least one row, should a single row hold more). Answers how many jobs.
 */
export function pruneArchive(t: string, retentionMs: number, limit: number): Statement {
  return {
    text: `WITH old AS (
  SELECT o.bucket, o.seq, sum(cardinality(o.ids)) OVER (ORDER BY o.finished_at, o.seq) - cardinality(o.ids) AS before
  FROM (SELECT bucket, seq, finished_at, ids FROM ${t}.archive_groups
        WHERE finished_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2) o
), gone AS (
  DELETE FROM ${t}.archive_groups g USING old
  WHERE g.bucket = old.bucket AND g.seq = old.seq AND (old.before = 0 OR old.before + cardinality(g.ids) <= $2)
  RETURNING g.ids
), steps AS (
  DELETE FROM ${t}.job_steps s USING (SELECT unnest(ids) AS id FROM gone) x WHERE s.job_id = x.id
)
SELECT coalesce(sum(cardinality(ids)), 0)::int AS n FROM gone`,
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
