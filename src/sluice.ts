import { type ResolvedConfig, resolveConfig, type SluiceOptions } from './config.js'
import { type ControlsApi, controlsApi } from './controls/api.js'
import { controlTasks } from './controls/tasks.js'
import { connect } from './db/connect.js'
import { instrument } from './db/instrument.js'
import type { Db } from './db/types.js'
import { observedDurations } from './drain/budget.js'
import { drain } from './drain/drain.js'
import type { DrainOptions, DrainSummary } from './drain/options.js'
import { ConfigError } from './errors.js'
import { type EventsApi, eventsApi } from './events/api.js'
import { eventTasks } from './events/tasks.js'
import {
  type DeadLetterQuery,
  deadLetterFilter,
  type Inspect,
  inspectApi,
  type StatsQuery,
} from './inspect.js'
import type { AnyJob, EnqueueInput, JobShape } from './jobs/define.js'
import {
  type EnqueueOptions,
  type EnqueueResult,
  prepare,
  prepareMany,
  resolveJob,
  target,
} from './jobs/enqueue.js'
import { HookRunner } from './jobs/hooks.js'
import { coreTasks, type MaintenanceReport, maintain, validateTasks } from './maintain/maintain.js'
import { type MigrateResult, migrate } from './migrate/run.js'
import { quoteSchema } from './names.js'
import type { BatchRow } from './sql/batches.js'
import {
  type DeadLetterRetry,
  type DeadLetterRow,
  discardDeadLetters,
  listDeadLetters,
  type RequeuedRow,
  requeueDeadLetters,
} from './sql/dead-letters.js'
import type { NewJob } from './sql/enqueue.js'
import type { JobResultRow } from './sql/jobs.js'
import type { QueueMetrics } from './sql/metrics.js'
import type { QueueStateRow } from './sql/queues.js'
import type { RecurringRun } from './sql/recurring.js'
import type { JobStats } from './sql/stats.js'
import { traceDb } from './tracing/db.js'
import { traceDrain, traceEnqueue, traceMaintain, tracePublish } from './tracing/operations.js'
import { Tracing } from './tracing/otel.js'
import { enqueueAndWake } from './wake/enqueue.js'
import { wakeTask } from './wake/task.js'

export type { DeadLetterQuery } from './inspect.js'

export interface Sluice extends ControlsApi, EventsApi {
  readonly config: ResolvedConfig
  /** The database Sluice runs on (instrumented with `onQuery`). */
  db(): Promise<Db>
  migrate(): Promise<MigrateResult>
  /** `job` is a registered job, its name, or a contract (defineContract) of a registered job. */
  enqueue<J extends JobShape>(
    job: J | string,
    /** A subscriber's jobs are written by publish: enqueueing one is refused (its input type is never). */
    input: EnqueueInput<J>,
    options?: EnqueueOptions,
  ): Promise<EnqueueResult>
  /** Many jobs of one kind in one statement; returns ids in input order. */
  enqueueMany<J extends JobShape>(
    job: J | string,
    inputs: readonly EnqueueInput<J>[],
    options?: EnqueueOptions,
  ): Promise<EnqueueResult[]>
  drain(options?: DrainOptions): Promise<DrainSummary>
  /** Runs the maintenance tasks that are due; safe to call from overlapping cron deliveries. */
  maintain(): Promise<MaintenanceReport>
  /** Every read of Sluice's state, one statement each: queues, status, invocations, stats, … */
  readonly inspect: Inspect
  /** Depth of every queue: the same as `inspect.queues()`. */
  metrics(): Promise<QueueMetrics[]>
  /** The same as `inspect.queueStates()`. */
  queueStates(): Promise<QueueStateRow[]>
  /** The same as `inspect.batch(id)`. */
  getBatch(id: string): Promise<BatchRow | null>
  /** The same as `inspect.result(id)`: a job's result, or where it stands. */
  result(id: string): Promise<JobResultRow | null>
  /** The same as `inspect.stats(query)`. */
  stats(query?: StatsQuery): Promise<JobStats>
  /** The same as `inspect.recurringRuns(task, limit)`. */
  recurringRuns(task?: string, limit?: number): Promise<RecurringRun[]>
  deadLetters: {
    /** The same as `inspect.deadLetters(query)`. */
    list(query?: DeadLetterQuery): Promise<DeadLetterRow[]>
    /**
     * Puts dead letters back in their queue (at most `limit`, default 1,000, per call; by filter,
     * the newest first, below `before` when given). A dead letter whose unique key is held by
     * another job, or whose concurrency key is full, stays a dead letter and is answered in
     * `kept` with the reason; ids that are no dead letter are in neither list. An empty filter
     * (`{}`) takes every dead letter of every queue, as the dashboard's and the CLI's "all" do;
     * the admin API refuses one.
     */
    retry(query: DeadLetterQuery | string): Promise<DeadLetterRetry>
    /** Deletes dead letters (at most `limit`, default 1,000, per call); an empty filter takes any. */
    discard(query: DeadLetterQuery | string): Promise<string[]>
  }
  close(): Promise<void>
}

/**
 * A dead letter as a row to enqueue again: with its job's controls (keys recomputed from the
 * payload) when the job is still defined and the payload still fits it; plain otherwise (the
 * run will then fail on the input and dead-letter again, saying why).
 */
function replayRow(row: DeadLetterRow, job: AnyJob | undefined, maxPayloadBytes: number): NewJob {
  const plain: NewJob = {
    queue: row.queue,
    name: row.name,
    payload: JSON.stringify(row.payload),
    priority: row.priority,
    maxAttempts: row.maxAttempts,
    runAt: null,
    delayMs: 0,
  }
  let prepared = plain
  if (job) {
    try {
      prepared = {
        ...prepare(job, row.payload, {}, Math.max(maxPayloadBytes, plain.payload.length * 4)),
        priority: row.priority,
      }
    } catch {
      prepared = plain
    }
  }
  return { ...prepared, id: row.id }
}

/** The database to run on; checked at the first operation, so that creating a Sluice needs no environment. */
async function open(database: string | Db | undefined, source: string): Promise<Db> {
  if (database === undefined)
    throw new ConfigError('No database: pass `database` (a URL or an adapter) or set DATABASE_URL.')
  return typeof database === 'string' ? connect(database, { source }) : database
}

/**
 * Creates a Sluice instance. Nothing connects until the first operation, and nothing from the
 * environment is required before it: a missing DATABASE_URL is an error at the first operation.
 */
export function createSluice(options: SluiceOptions): Sluice {
  const config = resolveConfig(options)
  const hooks = new HookRunner(config.hooks)
  const t = quoteSchema(config.schema)
  const tasks = [
    ...coreTasks(config.maintenance),
    ...controlTasks(
      config.maintenance,
      config.queueSettings,
      config.syncRecurring ? config.recurring : undefined,
      config.maxPayloadBytes,
    ),
    ...eventTasks(
      config.maintenance,
      config.events,
      config.syncSubscriptions ? config.subscribers : undefined,
    ),
    // Last, so that the jobs recurring tasks and promotions just enqueued are woken too.
    wakeTask(config.wake, config.queues, Math.min(config.maintenance.intervalMs, 10_000)),
  ]
  validateTasks(tasks)
  const tracing = new Tracing(config.tracing)
  let opened: Promise<Db> | undefined
  const db = (): Promise<Db> => {
    opened ??= Promise.all([
      open(config.database, options.database === undefined ? 'DATABASE_URL' : 'database'),
      // @opentelemetry/api, when installed, is imported with the first connection.
      tracing.ready(),
    ]).then(
      ([raw]) => traceDb(instrument(raw, config.onQuery), tracing),
      (error: unknown) => {
        // A failed open is retried by the next operation rather than remembered.
        opened = undefined
        throw error
      },
    )
    return opened
  }

  async function enqueueWith(
    job: AnyJob,
    input: unknown,
    run: () => Promise<EnqueueResult[]>,
  ): Promise<EnqueueResult[]> {
    const event = { job: job.name, queue: job.queue, input, priority: job.priority }
    await hooks.before('beforeEnqueue', event)
    let written: EnqueueResult[] | undefined
    try {
      await hooks.around('aroundEnqueue', event, async () => {
        written = await run()
        return written
      })
    } catch (error) {
      // An around-hook that throws after the job was written does not un-write it.
      if (written === undefined) throw error
      hooks.fatal(error, { phase: 'enqueue-hook', job: job.name })
    }
    const results = written as EnqueueResult[]
    for (const result of results) {
      if (result.status === 'duplicate' && job.unique?.onConflict === 'log') {
        config.logger.warn(
          `sluice: duplicate of job ${result.existingId} discarded (job "${job.name}", unique key)`,
        )
      }
    }
    await hooks.after('afterEnqueue', { ...event, id: results[0]?.id ?? null, results }, job.name)
    return results
  }

  const controls = controlsApi(db, t, config)
  const events = eventsApi(db, t, config)
  const publish = events.publish
  const inspect = inspectApi(db, t, config)
  const sluice: Sluice = {
    ...controls,
    ...events,
    config,
    db,
    async migrate() {
      const result = await migrate(await db(), config.schema)
      await controls.syncQueues()
      await events.syncSubscriptions()
      return result
    },
    async enqueue(jobOrName, input, opts = {}) {
      const job = resolveJob(config.jobs, jobOrName)
      const row = prepare(job, input, opts, config.maxPayloadBytes)
      const on = target(await db(), opts.tx)
      const write = () =>
        enqueueWith(job, input, () => enqueueAndWake(on, t, [row], config.wake, opts.tx !== undefined))
      const tracer = tracing.tracer()
      const [result] = await (tracer === undefined
        ? write()
        : traceEnqueue(tracing, tracer, job, [row], write))
      return result!
    },
    async enqueueMany(jobOrName, inputs, opts = {}) {
      const job = resolveJob(config.jobs, jobOrName)
      const rows = prepareMany(job, inputs, opts, config.maxPayloadBytes)
      const on = target(await db(), opts.tx)
      const write = () =>
        enqueueWith(job, inputs, () => enqueueAndWake(on, t, rows, config.wake, opts.tx !== undefined))
      const tracer = tracing.tracer()
      return tracer === undefined ? write() : traceEnqueue(tracing, tracer, job, rows, write)
    },
    async publish(topic, payload, opts = {}) {
      await tracing.ready()
      const tracer = tracing.tracer()
      if (tracer === undefined) return publish(topic, payload, opts)
      return tracePublish(tracing, tracer, topic, opts, (traced) => publish(topic, payload, traced))
    },
    async drain(opts = {}) {
      const on = await db()
      const tracer = tracing.tracer()
      if (tracer === undefined) return drain(on, t, config, hooks, opts)
      return traceDrain(tracing, tracer, (runJob) =>
        drain(on, t, config, hooks, opts, observedDurations, runJob),
      )
    },
    async maintain() {
      const on = await db()
      const tracer = tracing.tracer()
      if (tracer === undefined) return maintain(on, t, tasks)
      return traceMaintain(tracing, tracer, () => maintain(on, t, tasks))
    },
    inspect,
    metrics: () => inspect.queues(),
    queueStates: () => inspect.queueStates(),
    getBatch: (id) => inspect.batch(id),
    result: (id) => inspect.result(id),
    stats: (query) => inspect.stats(query),
    recurringRuns: (task, limit) => inspect.recurringRuns(task, limit),
    deadLetters: {
      list: (query) => inspect.deadLetters(query),
      async retry(query) {
        const on = await db()
        const filter = deadLetterFilter(query, 1000)
        const before = typeof query === 'string' ? undefined : query.before
        const { rows } = await on.query<DeadLetterRow>(
          listDeadLetters(t, { ...filter, ...(before === undefined ? {} : { before }) }),
        )
        if (rows.length === 0) return { requeued: [], kept: [] }
        const { rows: done } = await on.query<RequeuedRow>(
          requeueDeadLetters(
            t,
            rows.map((row) => replayRow(row, config.jobs.get(row.name), config.maxPayloadBytes)),
          ),
        )
        return {
          requeued: done.flatMap((r) => (r.status === 'kept' ? [] : [r.id])),
          kept: done.flatMap((r) => (r.status === 'kept' ? [{ id: r.id, reason: r.reason ?? '' }] : [])),
        }
      },
      async discard(query) {
        const { rows } = await (await db()).query<{ id: string }>(
          discardDeadLetters(t, deadLetterFilter(query, 1000)),
        )
        return rows.map((r) => r.id)
      },
    },
    async close() {
      if (opened) await (await opened).close()
      opened = undefined
    },
  }
  return sluice
}
