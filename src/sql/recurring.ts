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
  /** Enqueued by hand (triggerRecurring), outside the schedule: `slot` is when. */
  manual: boolean
}

export function recurringRuns(t: string, task: string | null, limit: number): Statement {
  return {
    text: `SELECT task, slot, job_id::text AS "jobId", status, enqueued_at AS "enqueuedAt", manual FROM ${t}.recurring_runs
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

/**
 * Enqueues a recurring task's job now, once, outside its schedule, and records the run in the
 * task's history as manual at this moment. The task's last slot is left alone, so no scheduled
 * slot is skipped.
 */
export function triggerRecurringRun(t: string, task: string, row: NewJob): Statement {
  return {
    text: `WITH enq AS (SELECT e.id, e.status FROM ${t}.enqueue_controlled($1::jsonb) e), run AS (
  INSERT INTO ${t}.recurring_runs (task, slot, job_id, status, manual)
  SELECT $2, now(), enq.id::bigint, enq.status, true FROM enq
  RETURNING slot
)
SELECT enq.id, enq.status, (SELECT slot FROM run) AS slot FROM enq`,
    values: [`[${controlledRow(row)}]`, task],
  }
}

/** A recurring task as stored, with its last run and what became of that run's job. */
export interface RecurringTaskRow {
  task: string
  cron: string
  timezone: string
  job: string
  /** The latest slot of the schedule enqueued; while `slotEnqueued` is false, where the schedule started. */
  lastSlot: Date
  /** Whether a slot of the schedule was ever enqueued (a manual run is none). */
  slotEnqueued: boolean
  lastRun: {
    slot: string
    jobId: string | null
    /** How the enqueue went: enqueued, or why not (duplicate, discarded…). */
    status: string | null
    manual: boolean
    /**
     * What became of its job: waiting, running, blocked, completed, expired, dead, or unknown
     * (its archive row pruned); null when no job was enqueued.
     */
    outcome: string | null
  } | null
}

export function recurringTasks(t: string): Statement {
  return {
    text: `SELECT r.name AS task, r.cron, r.timezone, r.job, r.last_slot AS "lastSlot",
  r.last_slot > r.created_at AS "slotEnqueued",
  CASE WHEN l.task IS NOT NULL THEN json_build_object(
    'slot', l.slot, 'jobId', l.job_id::text, 'status', l.status, 'manual', l.manual,
    'outcome', CASE
      WHEN l.job_id IS NULL THEN NULL
      WHEN EXISTS (SELECT 1 FROM ${t}.jobs j WHERE j.id = l.job_id AND j.lease_token IS NOT NULL AND j.lease_until > now())
        THEN 'running'
      WHEN EXISTS (SELECT 1 FROM ${t}.jobs j WHERE j.id = l.job_id) THEN 'waiting'
      WHEN EXISTS (SELECT 1 FROM ${t}.blocked b WHERE b.id = l.job_id) THEN 'blocked'
      WHEN EXISTS (SELECT 1 FROM ${t}.dead_letters d WHERE d.id = l.job_id) THEN 'dead'
      ELSE coalesce((SELECT a.status FROM ${t}.archived_job(l.job_id) a), 'unknown') END) END AS "lastRun"
FROM ${t}.recurring r
LEFT JOIN LATERAL (
  SELECT * FROM ${t}.recurring_runs x WHERE x.task = r.name ORDER BY x.slot DESC LIMIT 1
) l ON true
ORDER BY r.name`,
    values: [],
  }
}
