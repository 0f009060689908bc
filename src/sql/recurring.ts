import type { Statement } from '../db/types.js'
import { controlledRow, type NewJob } from './enqueue.js'

/** A recurring task from code, as syncRecurring writes it: `job` is the job's name. */
export interface RecurringRow {
  name: string
  cron: string
  timezone: string
  job: string
  input: unknown
}

/** Writes the definitions, removes those no longer in code, and returns each task's last slot. */
export function syncRecurring(t: string, tasks: readonly RecurringRow[]): Statement {
  return {
    text: `WITH defs AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS d(name text, cron text, timezone text, job text, input jsonb)
), up AS (
  INSERT INTO ${t}.recurring AS r (name, cron, timezone, job, input)
  SELECT name, cron, timezone, job, input FROM defs
  ON CONFLICT (name) DO UPDATE SET cron = excluded.cron, timezone = excluded.timezone, job = excluded.job, input = excluded.input
  WHERE (r.cron, r.timezone, r.job, r.input) IS DISTINCT FROM (excluded.cron, excluded.timezone, excluded.job, excluded.input)
), gone AS (
  DELETE FROM ${t}.recurring r WHERE NOT EXISTS (SELECT 1 FROM defs WHERE defs.name = r.name)
)
SELECT d.name, r.last_slot, now() AS now FROM defs d LEFT JOIN ${t}.recurring r ON r.name = d.name`,
    values: [
      JSON.stringify(
        tasks.map(({ name, cron, timezone, job, input }) => ({ name, cron, timezone, job, input })),
      ),
    ],
  }
}

export function enqueueRecurring(
  t: string,
  slots: readonly { task: string; slot: Date; row: NewJob }[],
): Statement {
  const items = slots.map(
    (s) =>
      `{"task":${JSON.stringify(s.task)},"slot":"${s.slot.toISOString()}","row":${controlledRow(s.row)}}`,
  )
  return {
    text: `SELECT task, slot, job_id, status FROM ${t}.enqueue_recurring($1::jsonb)`,
    values: [`[${items.join(',')}]`],
  }
}

/** One slot of a recurring task, as `sluice.inspect.recurringRuns()` returns it. */
export interface RecurringRun {
  task: string
  slot: Date
  jobId: string | null
  status: string | null
  enqueuedAt: Date
}

export function recurringRuns(t: string, task: string | null, limit: number): Statement {
  return {
    text: `SELECT task, slot, job_id::text AS "jobId", status, enqueued_at AS "enqueuedAt" FROM ${t}.recurring_runs
WHERE ($1::text IS NULL OR task = $1) ORDER BY slot DESC LIMIT $2`,
    values: [task, limit],
  }
}

export function pruneRecurringRuns(t: string, retentionMs: number, limit: number): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.recurring_runs WHERE (task, slot) IN (
    SELECT task, slot FROM ${t}.recurring_runs WHERE enqueued_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`,
    values: [retentionMs, limit],
  }
}
