import type { Cron } from 'croner'
import * as z from 'zod/mini'
import type { Db } from '../db/types.js'
import { ConfigError, toIssues } from '../errors.js'
import type { AnyJob } from '../jobs/define.js'
import { prepare } from '../jobs/enqueue.js'
import { firstIssue } from '../json.js'
import { nameSchema } from '../names.js'
import type { NewJob } from '../sql/enqueue.js'
import { enqueueRecurring, syncRecurring } from '../sql/recurring.js'
import { ONCE } from '../validate.js'
import { checkCron, cronSchedule } from './schedule.js'

export type { RecurringRun } from '../sql/recurring.js'

export interface RecurringOptions {
  /** Unique name of the task; its slots are recorded under it. */
  name: string
  /** A five- or six-field cron expression, e.g. `0 3 * * *`. */
  cron: string
  /** IANA time zone the expression is read in. Default `UTC`. */
  timezone?: string
  job: AnyJob
  /** The job's input for every slot; validated at startup. */
  input: unknown
  /**
   * Slots missed while maintenance did not run: `skip` enqueues only the latest one (default),
   * `{ backfill: n }` enqueues up to the n latest.
   */
  missed?: 'skip' | { backfill: number }
}

export interface RecurringTask {
  readonly kind: 'recurring'
  readonly name: string
  readonly cron: string
  readonly timezone: string
  readonly job: AnyJob
  readonly input: unknown
  readonly backfill: number
  /** The expression in the task's time zone; built at its first use. */
  readonly schedule: Cron
}

const optionsSchema = z.lazy(() =>
  z.strictObject({
    name: nameSchema,
    cron: z.string().check(z.minLength(1), z.maxLength(200)),
    timezone: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
    job: z.custom<AnyJob>((j) => (j as AnyJob | undefined)?.kind === 'job', 'must come from defineJob()'),
    input: z.unknown(),
    missed: z.optional(
      z.union([
        z.literal('skip'),
        z.strictObject({ backfill: z.int().check(z.minimum(1), z.maximum(1000)) }),
      ]),
    ),
  }),
)

/** Declares a recurring task. Invalid expressions, zones and inputs are caught here, at startup. */
export function defineRecurring(options: RecurringOptions): RecurringTask {
  const parsed = optionsSchema.safeParse(options, ONCE)
  if (!parsed.success) {
    throw new ConfigError(
      `Invalid recurring task${typeof options?.name === 'string' ? ` "${options.name}"` : ''}${firstIssue(parsed.error.issues)}`,
      toIssues(parsed.error.issues),
    )
  }
  const timezone = options.timezone ?? 'UTC'
  // Every function that imports the app defines its tasks, so defining one must cost a cold
  // start next to nothing. A time zone makes croner build an Intl.DateTimeFormat, whose first use
  // loads the zone data (about 28 ms): the expression is checked here in UTC (its syntax does not
  // depend on the zone), the zone against the runtime's list of zones (about 3 ms), and the
  // zone's schedule is built when its slots are first read (maintenance, inspect).
  try {
    checkCron(options.cron)
  } catch (error) {
    throw new ConfigError(`Recurring task "${options.name}": ${(error as Error).message}`)
  }
  if (timezone !== 'UTC' && !knownTimeZone(timezone))
    throw new ConfigError(
      `Recurring task "${options.name}": unknown time zone ${JSON.stringify(timezone)} (an IANA name, such as "Europe/Paris").`,
    )
  let schedule: Cron | undefined
  const cron = options.cron
  const input = z.safeParse(options.job.input, options.input, ONCE)
  if (!input.success) {
    throw new ConfigError(
      `Recurring task "${options.name}": input does not fit job "${options.job.name}": ${input.error.issues[0]?.message}`,
      toIssues(input.error.issues),
    )
  }
  const missed = options.missed ?? 'skip'
  return Object.freeze({
    kind: 'recurring',
    name: options.name,
    cron,
    timezone,
    job: options.job,
    input: options.input,
    backfill: missed === 'skip' ? 1 : missed.backfill,
    get schedule(): Cron {
      schedule ??= cronSchedule(cron, timezone)
      return schedule
    },
  })
}

let zones: ReadonlySet<string> | undefined

/**
 * Whether the runtime knows `zone`: its list of canonical IANA names first, then (for an alias
 * such as "Asia/Calcutta", or another spelling) whether Intl accepts the name.
 */
function knownTimeZone(zone: string): boolean {
  if (typeof Intl.supportedValuesOf === 'function') {
    zones ??= new Set(Intl.supportedValuesOf('timeZone'))
    if (zones.has(zone)) return true
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/** Whether `value` came from defineRecurring, without building its schedule. */
export function isRecurringTask(value: unknown): value is RecurringTask {
  return (value as Partial<RecurringTask> | null)?.kind === 'recurring'
}

/** Slots of `task` after `after` up to `now`, the latest `task.backfill` of them, oldest first. */
export function dueSlots(task: RecurringTask, after: Date, now: Date, scanLimit = 10_000): Date[] {
  const slots: Date[] = []
  let cursor: Date | null = after
  for (let i = 0; i < scanLimit; i++) {
    cursor = task.schedule.nextRun(cursor)
    if (!cursor || cursor > now) break
    slots.push(cursor)
    if (slots.length > task.backfill) slots.shift()
  }
  return slots
}

/**
 * One maintenance pass: sync the definitions, then enqueue every task's due slots. New tasks
 * start from the moment they are first seen: slots before that are not backfilled.
 */
export async function runRecurring(
  db: Db,
  t: string,
  tasks: readonly RecurringTask[],
  maxPayloadBytes: number,
): Promise<number> {
  const { rows } = await db.query<{ name: string; last_slot: Date | null; now: Date }>(
    syncRecurring(
      t,
      tasks.map((task) => ({
        name: task.name,
        cron: task.cron,
        timezone: task.timezone,
        job: task.job.name,
        input: task.input,
      })),
    ),
  )
  const byName = new Map(tasks.map((task) => [task.name, task]))
  const slots: { task: string; slot: Date; row: NewJob }[] = []
  for (const row of rows) {
    const task = byName.get(row.name)
    if (!task || !row.last_slot) continue
    for (const slot of dueSlots(task, row.last_slot, row.now)) {
      slots.push({ task: task.name, slot, row: prepare(task.job, task.input, {}, maxPayloadBytes) })
    }
  }
  if (slots.length === 0) return 0
  const result = await db.query(enqueueRecurring(t, slots))
  return result.rows.length
}
