import { parseBatchId } from './controls/api.js'
import { parseJobId } from './controls/jobs.js'
import { parsePolicyName } from './controls/partitions.js'
import type { RecurringTask } from './controls/recurring.js'
import type { Db } from './db/types.js'
import { SluiceError, ValidationError } from './errors.js'
import {
  type BatchesQuery,
  type DeadLetterQuery,
  deadLetterFilter,
  type JobsQuery,
  moment,
  type PartitionsQuery,
  type StatsQuery,
} from './inspect-queries.js'
import { attemptsTimeline, type JobAttempt } from './jobs/timeline.js'
import { appliedVersions, knownVersion } from './migrate/run.js'
import { assertName } from './names.js'
import { type PartitionRow, type PolicyRow, partitions, policies } from './sql/admission.js'
import { type BatchRow, getBatch, listBatches } from './sql/batches.js'
import {
  type DatabaseHealth,
  databaseHealth,
  HORIZON_THRESHOLDS,
  type HorizonThresholds,
} from './sql/database.js'
import { type DeadLetterRow, listDeadLetters } from './sql/dead-letters.js'
import {
  getJob,
  getJobResult,
  JOB_STATES,
  type JobDetailRow,
  type JobResultRow,
  type JobRow,
  listJobs,
} from './sql/jobs.js'
import { type EventsView, eventsView, type Locks, locks } from './sql/lock-views.js'
import { type QueueMetrics, queueMetrics, type Scrape, scrape } from './sql/metrics.js'
import { OVERVIEW_LIMITS, type Overview, overview } from './sql/overview.js'
import { type QueueStateRow, queueStates } from './sql/queues.js'
import { type RecurringRun, type RecurringTaskRow, recurringRuns, recurringTasks } from './sql/recurring.js'
import { type JobStats, jobStats } from './sql/stats.js'
import { type InvocationRow, invocations, type StatusRow, status } from './sql/status.js'

export {
  type BatchesQuery,
  type DeadLetterQuery,
  deadLetterFilter,
  type JobsQuery,
  type PartitionsQuery,
  type StatsQuery,
} from './inspect-queries.js'

/** One job with its error history and its attempts, oldest first. */
export interface JobDetail extends Omit<JobDetailRow, 'lastDurationMs' | 'lastInvocation'> {
  /**
   * Each attempt the error history records (the last ten failures: start, end, duration, the
   * drain invocation, the error), then the running one or, for an archived job, the one that
   * completed (or expired) it.
   */
  timeline: JobAttempt[]
}

/**
 * Every read of Sluice's state, one statement each. The CLI, the HTTP app (/metrics, /health)
 * and the dashboard all read through this; nothing else sends a read of its own.
 */
export interface Inspect {
  /** Depth of every queue (those of the defined jobs even when empty). */
  queues(): Promise<QueueMetrics[]>
  /**
   * A page of the jobs in the jobs table (waiting, scheduled, running, failed and waiting for
   * a retry) in id order, with payload, attempts and last error. Page on with `after`.
   */
  jobs(query?: JobsQuery): Promise<JobRow[]>
  /**
   * One job with its error history and attempts, wherever it is: waiting, running, archived
   * (`completed`, `expired`) or a dead letter (`dead`). Null when it is none of these: never
   * enqueued, cancelled, or archived longer ago than the archive keeps jobs.
   */
  job(id: string): Promise<JobDetail | null>
  /**
   * A job's result: `completed` with the handler's return value, `dead` with its last error,
   * `expired`, or `pending` / `running` while it waits or runs. Null when the job is unknown (never
   * enqueued, cancelled, or archived longer ago than the archive keeps jobs).
   */
  result(id: string): Promise<JobResultRow | null>
  /**
   * Every admission policy: its queue, global cap, partitions (how many, how many paused) and
   * its jobs waiting (counted up to 10,000) and running.
   */
  policies(): Promise<PolicyRow[]>
  /**
   * A page of a policy's partitions, in key order: jobs waiting (counted up to 10,000) and
   * running, tokens, caps, lag, the operator's settings, and `reason`, why the next waiting job
   * is not running now (null when nothing waits or it is admissible). Empty for an unknown policy.
   */
  partitions(policy: string, query?: PartitionsQuery): Promise<PartitionRow[]>
  /** What /metrics exports: every queue's depth and the most recently active partitions (500 at most). */
  scrape(): Promise<Scrape>
  /** Every queue's stored state: pause, breaker, single-consumer lease. */
  queueStates(): Promise<QueueStateRow[]>
  /** The schema version, the drains running and the maintenance tasks' last runs. */
  status(): Promise<StatusRow>
  /** The drains running now (and those whose lease ran out, until maintenance reaps them). */
  invocations(): Promise<InvocationRow[]>
  /** Finished attempts over the last `sinceMs`: summary, status counts, throughput per minute, slowest names. */
  stats(query?: StatsQuery): Promise<JobStats>
  /**
   * Every recurring task stored (synced from code by maintenance): its cron, the last slot of
   * its schedule enqueued, the next one (null for a task no longer defined here), and its last
   * run (scheduled or manual) with what became of the job.
   */
  recurring(): Promise<RecurringTaskInfo[]>
  /** The execution history of recurring tasks, newest slot first. */
  recurringRuns(task?: string, limit?: number): Promise<RecurringRun[]>
  batch(id: string): Promise<BatchRow | null>
  /** Recent batches, newest first (finished ones until maintenance prunes them). Page on with `before`. */
  batches(query?: BatchesQuery): Promise<BatchRow[]>
  /** Dead letters, newest first. */
  deadLetters(query?: DeadLetterQuery): Promise<DeadLetterRow[]>
  /**
   * The dashboard's front page in one statement, as cheap at 1M jobs as at 10: per queue ready,
   * scheduled, retrying, running and blocked jobs and the oldest ready job's age; finished
   * attempts per minute over the last hour; dead letters; the live drains. On a large jobs table
   * the state counts are scaled from a sample (`estimated: true` on the queue).
   */
  overview(): Promise<Overview>
  /**
   * Every lock held as a row: uniqueness locks (the oldest 500), concurrency semaphores with
   * their holders and blocked jobs, single-consumer queue leases. One statement.
   */
  locks(): Promise<Locks>
  /**
   * The database's side: each Sluice table's live and dead tuples, bloat estimate, size and last
   * autovacuum / autoanalyze; the oldest holders of the xmin horizon (transactions, replication
   * slots, prepared transactions) and a `warning` when the oldest is past `thresholds` (10,000
   * transactions or 60 s) while the jobs table has dead rows. One statement.
   */
  database(thresholds?: Partial<HorizonThresholds>, options?: DatabaseOptions): Promise<DatabaseHealth>
  /** Subscribers (deliveries over the last hour, processed marks, last delivery) and the outbox's backlog. */
  events(): Promise<EventsView>
  /**
   * Resolves when the database answers and its schema holds every migration this Sluice knows, in
   * one statement; rejects with MIGRATIONS_REQUIRED when it does not (`sluice migrate`).
   */
  health(): Promise<void>
  /** The migration versions applied to the schema; empty when Sluice's tables are not there. */
  migrations(): Promise<number[]>
}

export interface DatabaseOptions {
  /**
   * Include the first 200 characters of each horizon holder's SQL text (`query`). Default false:
   * the sessions may belong to other applications sharing the database.
   */
  queries?: boolean
}

export interface RecurringTaskInfo extends RecurringTaskRow {
  /** The next slot of the schedule after the last one enqueued (in the past when maintenance is behind). */
  nextSlot: Date | null
}

export function inspectApi(
  db: () => Promise<Db>,
  t: string,
  config: { queues: readonly string[]; schema: string; recurring?: readonly RecurringTask[] },
): Inspect {
  return {
    async queues() {
      return (await (await db()).query<QueueMetrics>(queueMetrics(t, config.queues))).rows
    },
    async jobs(query = {}) {
      const limit = query.limit ?? 100
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new ValidationError('jobs: limit must be 1..1000')
      if (query.state !== undefined && !JOB_STATES.includes(query.state))
        throw new ValidationError(`jobs: state must be one of ${JOB_STATES.join(', ')}`)
      const filter = {
        queue: query.queue === undefined ? null : assertName('queue', query.queue),
        name: query.name === undefined ? null : assertName('job', query.name),
        state: query.state ?? null,
        after: query.after === undefined ? null : parseJobId(query.after),
        since: moment('since', query.since),
        until: moment('until', query.until),
        limit,
      }
      return (await (await db()).query<JobRow>(listJobs(t, filter))).rows
    },
    async result(id) {
      const { rows } = await (await db()).query<JobResultRow>(getJobResult(t, parseJobId(id)))
      return rows[0] ?? null
    },
    async job(id) {
      const { rows } = await (await db()).query<JobDetailRow>(getJob(t, parseJobId(id)))
      const row = rows[0]
      if (!row) return null
      const { lastDurationMs, lastInvocation, ...job } = row
      const running = job.runningIn === null ? null : { startedAt: job.startedAt, invocation: job.runningIn }
      const last =
        (job.state === 'completed' || job.state === 'expired') && job.endedAt !== null
          ? {
              outcome: job.state,
              endedAt: job.endedAt,
              durationMs: lastDurationMs,
              invocation: lastInvocation,
            }
          : null
      return { ...job, timeline: attemptsTimeline(job.errors, job.attempts, { running, last }) }
    },
    async policies() {
      return (await (await db()).query<PolicyRow>(policies(t))).rows
    },
    async partitions(policy, query = {}) {
      const name = parsePolicyName(policy)
      const limit = query.limit ?? 100
      const offset = query.offset ?? 0
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new ValidationError('partitions: limit must be 1..1000')
      if (!Number.isInteger(offset) || offset < 0 || offset > 100_000_000)
        throw new ValidationError('partitions: offset must be a whole number from 0')
      return (await (await db()).query<PartitionRow>(partitions(t, name, limit, offset))).rows
    },
    async scrape() {
      const { rows } = await (await db()).query<Scrape>(scrape(t, config.queues))
      const row = rows[0]!
      return {
        // JSON carries timestamps as text.
        queues: row.queues.map((q) => ({
          ...q,
          breakerUntil: q.breakerUntil === null ? null : new Date(q.breakerUntil),
        })),
        partitions: row.partitions,
      }
    },
    async queueStates() {
      return (await (await db()).query<QueueStateRow>(queueStates(t))).rows
    },
    async status() {
      return (await (await db()).query<StatusRow>(status(t))).rows[0]!
    },
    async invocations() {
      return (await (await db()).query<InvocationRow>(invocations(t))).rows
    },
    async stats(query = {}) {
      const sinceMs = query.sinceMs ?? 3_600_000
      const slowest = query.slowest ?? 10
      if (
        !Number.isInteger(sinceMs) ||
        sinceMs < 1 ||
        !Number.isInteger(slowest) ||
        slowest < 1 ||
        slowest > 1000
      ) {
        throw new ValidationError('stats: sinceMs must be a positive integer and slowest 1..1000')
      }
      const queue = query.queue === undefined ? null : assertName('queue', query.queue)
      const { rows } = await (await db()).query<Omit<JobStats, 'sinceMs' | 'statusCounts'>>(
        jobStats(t, sinceMs, slowest, queue),
      )
      const row = rows[0]!
      const { completed, failed, dead, expired } = row.summary
      return { sinceMs, ...row, statusCounts: { completed, failed, dead, expired } }
    },
    async recurring() {
      const { rows } = await (await db()).query<RecurringTaskRow>(recurringTasks(t))
      const defined = new Map((config.recurring ?? []).map((r) => [r.name, r]))
      return rows.map((row) => ({
        ...row,
        nextSlot: defined.get(row.task)?.schedule.nextRun(new Date(row.lastSlot)) ?? null,
      }))
    },
    async recurringRuns(task, limit = 100) {
      if (task !== undefined) assertName('job', task)
      const { rows } = await (await db()).query<RecurringRun>(
        recurringRuns(t, task ?? null, Math.min(Math.max(1, limit), 10_000)),
      )
      return rows
    },
    async batch(id) {
      const { rows } = await (await db()).query<BatchRow>(getBatch(t, parseBatchId(id)))
      return rows[0] ?? null
    },
    async batches(query = {}) {
      const limit = query.limit ?? 50
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new ValidationError('batches: limit must be 1..1000')
      const before = query.before === undefined ? null : parseBatchId(query.before)
      return (await (await db()).query<BatchRow>(listBatches(t, limit, before))).rows
    },
    async deadLetters(query = {}) {
      const { rows } = await (await db()).query<DeadLetterRow>(
        listDeadLetters(t, {
          ...deadLetterFilter(query, 100),
          ...(query.before ? { before: query.before } : {}),
        }),
      )
      return rows
    },
    async overview() {
      const statement = overview(t, config.schema, config.queues, OVERVIEW_LIMITS)
      return (await (await db()).query<Overview>(statement)).rows[0]!
    },
    async locks() {
      return (await (await db()).query<Locks>(locks(t))).rows[0]!
    },
    async database(thresholds = {}, options = {}) {
      const limits = { ...HORIZON_THRESHOLDS, ...thresholds }
      if (
        !Number.isInteger(limits.xminAge) ||
        limits.xminAge < 0 ||
        !Number.isInteger(limits.heldMs) ||
        limits.heldMs < 0
      )
        throw new ValidationError('database: thresholds are whole numbers from 0')
      return (
        await (
          await db()
        ).query<DatabaseHealth>(databaseHealth(config.schema, limits, options.queries ?? false))
      ).rows[0]!
    },
    async events() {
      return (await (await db()).query<EventsView>(eventsView(t))).rows[0]!
    },
    async health() {
      const version = Math.max(0, ...(await appliedVersions(await db(), config.schema)))
      if (version === 0)
        throw new SluiceError(
          'MIGRATIONS_REQUIRED',
          `Sluice's tables are not in schema "${config.schema}".`,
          {
            hint: 'Run `sluice migrate` to create them.',
          },
        )
      const latest = knownVersion()
      if (latest !== undefined && version < latest)
        throw new SluiceError(
          'MIGRATIONS_REQUIRED',
          `Schema "${config.schema}" is at version ${version}; this Sluice needs version ${latest}.`,
          { hint: 'Run `sluice migrate` to apply the rest.' },
        )
    },
    async migrations() {
      return appliedVersions(await db(), config.schema)
    },
  }
}
