import * as z from 'zod/mini'
import type { Db, Queryable } from '../db/types.js'
import { ConfigError, toIssues } from '../errors.js'
import {
  buryExhausted,
  claimTasks,
  pruneArchive,
  pruneEventLog,
  reapInvocations,
  recordTask,
} from '../sql/maintenance.js'
import { ONCE } from '../validate.js'

export interface TaskContext {
  db: Db
  /** The quoted schema, ready to splice into statements. */
  t: string
}

/** A periodic job of the system itself. Runs at most once per interval, whoever calls maintain(). */
export interface MaintenanceTask {
  name: string
  intervalMs: number
  /** Does one bounded slice of work and returns the rows it touched. */
  run(ctx: TaskContext): Promise<number>
}

export interface TaskReport {
  task: string
  ran: boolean
  rows: number
  ms: number
  error?: string
}

export interface MaintenanceReport {
  ranAt: string
  tasks: TaskReport[]
}

export interface MaintenanceOptions {
  /** How long finished jobs stay in the archive, ms. Default 7 days. */
  archiveRetentionMs: number
  /** Most rows one task touches per run. Default 10,000. */
  batchSize: number
  /** Default interval for the built-in tasks, ms. Default 30 s. */
  intervalMs: number
  /** How long finished batches are kept, ms. Default 7 days. */
  batchRetentionMs: number
  /** How long job stats are kept, ms. Default 7 days. */
  statsRetentionMs: number
}

export const MAINTENANCE_DEFAULTS: MaintenanceOptions = {
  archiveRetentionMs: 7 * 86_400_000,
  batchSize: 10_000,
  intervalMs: 30_000,
  batchRetentionMs: 7 * 86_400_000,
  statsRetentionMs: 7 * 86_400_000,
}

export const maintenanceOptionsSchema = z.lazy(() =>
  z.partial(
    z.strictObject({
      archiveRetentionMs: z.int().check(z.minimum(0)),
      batchSize: z.int().check(z.minimum(1), z.maximum(1_000_000)),
      intervalMs: z.int().check(z.minimum(0), z.maximum(86_400_000)),
      batchRetentionMs: z.int().check(z.minimum(0)),
      statsRetentionMs: z.int().check(z.minimum(0)),
    }),
  ),
)

/**
 * How long the event log keeps an event: longer than any run lasts (Lambda's 15 minutes), since a
 * wait looks back to the start of the run that records it (docs/steps.md).
 */
export const EVENT_LOG_KEEP_MS = 3_600_000

export const count = async (
  db: Queryable,
  statement: { text: string; values: readonly unknown[] },
): Promise<number> => (await db.query<{ n: number }>(statement)).rows[0]?.n ?? 0

/** The built-in tasks every deployment runs. Later features add theirs to the same list. */
export function coreTasks(options: MaintenanceOptions): MaintenanceTask[] {
  return [
    {
      name: 'reap-invocations',
      intervalMs: options.intervalMs,
      run: ({ db, t }) => count(db, reapInvocations(t)),
    },
    {
      name: 'bury-exhausted',
      intervalMs: options.intervalMs,
      run: ({ db, t }) => count(db, buryExhausted(t, options.batchSize)),
    },
    {
      name: 'prune-archive',
      intervalMs: options.intervalMs,
      run: ({ db, t }) => count(db, pruneArchive(t, options.archiveRetentionMs, options.batchSize)),
    },
    {
      name: 'prune-event-log',
      intervalMs: options.intervalMs,
      run: ({ db, t }) => count(db, pruneEventLog(t, EVENT_LOG_KEEP_MS, options.batchSize)),
    },
  ]
}

const taskSchema = z.lazy(() =>
  z.object({
    name: z.string().check(z.regex(/^[a-z][a-z0-9-]{0,62}$/)),
    intervalMs: z.int().check(z.minimum(0)),
  }),
)

export function validateTasks(tasks: readonly MaintenanceTask[]): void {
  const names = new Set<string>()
  for (const task of tasks) {
    const ok = taskSchema.safeParse(task, ONCE)
    if (!ok.success)
      throw new ConfigError(`Invalid maintenance task "${task.name}"`, toIssues(ok.error.issues))
    if (names.has(task.name)) throw new ConfigError(`Two maintenance tasks are named "${task.name}".`)
    names.add(task.name)
  }
}

/**
 * Runs every due task once. Safe to call from overlapping or duplicated cron deliveries:
 * one statement hands each due task to exactly one caller; the others report it skipped.
 * A failing task is reported and does not stop the others.
 */
export async function maintain(
  db: Db,
  t: string,
  tasks: readonly MaintenanceTask[],
): Promise<MaintenanceReport> {
  const ranAt = new Date().toISOString()
  const { rows } = await db.query<{ task: string }>(claimTasks(t, tasks))
  const won = new Set(rows.map((row) => row.task))
  const reports: TaskReport[] = []
  for (const task of tasks) {
    if (!won.has(task.name)) {
      reports.push({ task: task.name, ran: false, rows: 0, ms: 0 })
      continue
    }
    const started = performance.now()
    try {
      const touched = await task.run({ db, t })
      reports.push({ task: task.name, ran: true, rows: touched, ms: Math.round(performance.now() - started) })
      if (touched > 0) await db.query(recordTask(t, task.name, touched, null))
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      reports.push({
        task: task.name,
        ran: true,
        rows: 0,
        ms: Math.round(performance.now() - started),
        error: message,
      })
      await db.query(recordTask(t, task.name, null, message)).catch(() => {})
    }
  }
  return { ranAt, tasks: reports }
}
