import * as z from 'zod/mini'
import { callable } from './callable.js'
import {
  breakerOptionSchema,
  type CircuitBreakerOptions,
  type QueueOptions,
  type QueueSettings,
  queuesSchema,
  resolveQueues,
} from './controls/queues.js'
import { isRecurringTask, type RecurringTask } from './controls/recurring.js'
import type { Db, QueryHook } from './db/types.js'
import { ConfigError, toIssues } from './errors.js'
import { EVENT_DEFAULTS, type EventOptions, eventOptionsSchema } from './events/options.js'
import { type AnySubscriber, isSubscriber } from './events/subscriber.js'
import type { AnyJob } from './jobs/define.js'
import type { Hooks } from './jobs/hooks.js'
import { firstIssue } from './json.js'
import {
  MAINTENANCE_DEFAULTS,
  type MaintenanceOptions,
  maintenanceOptionsSchema,
} from './maintain/maintain.js'
import { schemaNameSchema } from './names.js'
import type { TracerProviderLike, TracingOption } from './tracing/option.js'
import { given, ONCE } from './validate.js'
import { resolveWake, type WakeInput } from './wake/config.js'
import type { WakeOptions } from './wake/send.js'

export interface DrainDefaults {
  /** Longest a drain runs, ms, before the platform's own limit applies. Default 55 s. */
  budgetMs: number
  /** Handlers running at once per drain. Default 10. */
  concurrency: number
  /** Most jobs claimed per statement (the drain's cap on jobs in flight). Default 200. */
  batchSize: number
  /** Kept free at the end of the budget to settle and answer. Default 1 s. */
  safetyMarginMs: number
  /** Extra lease beyond the deadline so a slow settle is not overtaken. Default 5 s. */
  leaseGraceMs: number
  /**
   * Statements a drain keeps in flight at once while its handlers are quick next to a round trip:
   * each settles what has finished and claims one more batch ahead, on a connection of its own.
   * 1 sends one at a time. Default 3.
   */
  pipeline: number
}

export interface SluiceOptions {
  /** A URL (`postgres://…`, `pglite:memory`, `pglite:<dir>`) or an adapter (fromPg, fromNeonPool, fromNeonHttp, fromPglite). */
  database?: string | Db | undefined
  jobs?: readonly AnyJob[]
  /**
   * Event subscribers (defineSubscriber). Synced to the database by migrate() and maintenance;
   * when this option is absent the stored subscriptions are left alone, when it is given
   * (even empty) subscriptions not in it are removed.
   */
  subscribers?: readonly AnySubscriber[]
  /** Event bus settings: retention of processed events and outbox entries, relay sizes. */
  events?: Partial<EventOptions>
  /** Schema holding Sluice's tables. Default `sluice`, or SLUICE_SCHEMA. */
  schema?: string | undefined
  hooks?: Hooks | readonly Hooks[]
  /** Sees every statement: for tracing and statement counting. */
  onQuery?: QueryHook
  /**
   * OpenTelemetry traces (docs/tracing.md). Default: spans go to the global tracer provider when
   * `@opentelemetry/api` is installed and a provider is registered; nothing happens otherwise.
   * `{ tracerProvider }` uses that provider instead, `{ statements: false }` leaves SQL statements
   * without spans, `false` turns tracing off.
   */
  tracing?: TracingOption
  /** Largest accepted job payload, bytes of JSON. Default 256 KiB. */
  maxPayloadBytes?: number
  drain?: Partial<DrainDefaults>
  maintenance?: Partial<MaintenanceOptions>
  /** Recurring tasks (from defineRecurring): maintenance enqueues each due slot once. */
  recurring?: readonly RecurringTask[]
  /** Per-queue settings: single active consumer, global concurrency, circuit breaker. */
  queues?: Record<string, QueueOptions>
  /** The circuit breaker every queue gets unless its own settings say otherwise; `false` turns it off. */
  circuitBreaker?: false | Partial<CircuitBreakerOptions>
  /** Wake-ups: signed POSTs to the drain endpoint after enqueue and from maintenance. */
  wake?: WakeInput
  /** Where warnings go (e.g. duplicates discarded with unique.onConflict 'log'). Default `console`. */
  logger?: Logger
  /** Where environment defaults come from. Default `process.env` where it exists. */
  env?: Record<string, string | undefined>
}

export interface Logger {
  warn(message: string): void
  info(message: string): void
  error(message: string): void
}

export interface ResolvedConfig {
  readonly logger: Logger
  /**
   * The database option, else DATABASE_URL. Undefined when neither is set: that is an error at
   * the first operation (not at creation, so that a framework's build needs no database).
   */
  readonly database: string | Db | undefined
  readonly schema: string
  /** Jobs and subscribers (a subscriber is a job whose input is the event envelope), by name. */
  readonly jobs: ReadonlyMap<string, AnyJob>
  readonly subscribers: readonly AnySubscriber[]
  /** Whether `subscribers` was given: only then are the stored subscriptions synced. */
  readonly syncSubscriptions: boolean
  readonly events: Readonly<EventOptions>
  readonly queues: readonly string[]
  readonly hooks: readonly Hooks[]
  readonly onQuery: QueryHook | undefined
  readonly tracing: TracingOption | undefined
  readonly maxPayloadBytes: number
  readonly drain: Readonly<DrainDefaults>
  readonly maintenance: Readonly<MaintenanceOptions>
  /** Every known queue's settings: those of the jobs' queues and of `queues`. */
  readonly queueSettings: readonly QueueSettings[]
  readonly recurring: readonly RecurringTask[]
  /** Whether `recurring` was given: only then are the stored recurring tasks synced (and others removed). */
  readonly syncRecurring: boolean
  readonly wake: Readonly<WakeOptions>
}

const drainSchema = () =>
  z.strictObject({
    budgetMs: z.int().check(z.positive(), z.maximum(3_600_000)),
    concurrency: z.int().check(z.minimum(1), z.maximum(1000)),
    batchSize: z.int().check(z.minimum(1), z.maximum(10_000)),
    safetyMarginMs: z.int().check(z.minimum(0), z.maximum(60_000)),
    leaseGraceMs: z.int().check(z.minimum(0), z.maximum(600_000)),
    pipeline: z.int().check(z.minimum(1), z.maximum(8)),
  })

export const DRAIN_DEFAULTS: DrainDefaults = {
  budgetMs: 55_000,
  concurrency: 10,
  batchSize: 200,
  safetyMarginMs: 1_000,
  leaseGraceMs: 5_000,
  pipeline: 3,
}

const tracingSchema = z.lazy(() =>
  z.strictObject({
    tracerProvider: z.optional(
      z.custom<TracerProviderLike>(
        (p) => typeof (p as TracerProviderLike | undefined)?.getTracer === 'function',
        'must be a TracerProvider (with getTracer)',
      ),
    ),
    statements: z.optional(z.boolean()),
  }),
)

const isDb = (value: unknown): value is Db =>
  typeof value === 'object' && value !== null && typeof (value as Db).query === 'function' && 'kind' in value

// Built at the first createSluice, its option groups at the first value each: see validate.ts.
const optionsSchema = z.lazy(() =>
  z.strictObject({
    database: z.optional(
      z.union([
        z.string().check(z.minLength(1)),
        z.custom<Db>(isDb, 'must be a URL or a Sluice database adapter'),
      ]),
    ),
    jobs: z.optional(
      z.array(
        z.custom<AnyJob>((j) => (j as AnyJob | undefined)?.kind === 'job', 'must come from defineJob()'),
      ),
    ),
    subscribers: z.optional(
      z.array(z.custom<AnySubscriber>(isSubscriber, 'must come from defineSubscriber()')),
    ),
    events: given(() => eventOptionsSchema),
    schema: z.optional(schemaNameSchema),
    hooks: z.optional(
      z.union([z.record(z.string(), z.unknown()), z.array(z.record(z.string(), z.unknown()))]),
    ),
    onQuery: z.optional(callable()),
    // false, or an object checked field by field below (a union would name no field).
    tracing: z.optional(
      z
        .custom<TracingOption>(
          (t) => t === false || (typeof t === 'object' && t !== null && !Array.isArray(t)),
          'must be false or { tracerProvider?, statements? }',
        )
        .check(
          z.superRefine((t, ctx) => {
            const checked = t === false ? undefined : tracingSchema.safeParse(t, ONCE)
            for (const issue of checked?.error?.issues ?? [])
              ctx.addIssue({
                code: 'custom',
                message: issue.message,
                path: issue.path as (string | number)[],
              })
          }),
        ),
    ),
    maxPayloadBytes: z.optional(z.int().check(z.minimum(1), z.maximum(64 * 1024 * 1024))),
    drain: given(() => z.partial(drainSchema())),
    maintenance: given(() => maintenanceOptionsSchema),
    queues: given(() => queuesSchema),
    recurring: z.optional(
      z.array(z.custom<RecurringTask>(isRecurringTask, 'must come from defineRecurring()')),
    ),
    circuitBreaker: given(() => breakerOptionSchema),
    env: z.optional(z.record(z.string(), z.optional(z.string()))),
    wake: z.optional(z.record(z.string(), z.unknown())),
    logger: z.optional(
      z.custom<Logger>(
        (l) => typeof (l as Logger | undefined)?.warn === 'function',
        'must have warn/info/error',
      ),
    ),
  }),
)

function defaultEnv(): Record<string, string | undefined> {
  return typeof process !== 'undefined' && process.env ? process.env : {}
}

/** Explicit options, then environment, then defaults; validated once and frozen. */
export function resolveConfig(options: SluiceOptions): ResolvedConfig {
  const parsed = optionsSchema.safeParse(options, ONCE)
  if (!parsed.success) {
    throw new ConfigError(
      `Invalid Sluice options${firstIssue(parsed.error.issues)}`,
      toIssues(parsed.error.issues),
    )
  }
  const env = options.env ?? defaultEnv()
  const schema = options.schema ?? env.SLUICE_SCHEMA ?? 'sluice'
  const schemaCheck = schemaNameSchema.safeParse(schema, ONCE)
  // options.schema passed the options schema above: a bad name here came from the environment.
  if (!schemaCheck.success) {
    const message = schemaCheck.error.issues[0]?.message ?? 'invalid'
    throw new ConfigError(
      `The environment variable SLUICE_SCHEMA is not a valid schema name ("${schema.slice(0, 80)}"): ${message}`,
      [{ path: ['env', 'SLUICE_SCHEMA'], message }],
    )
  }
  const database = options.database ?? (env.DATABASE_URL || undefined)
  const jobs = new Map<string, AnyJob>()
  for (const job of options.jobs ?? []) {
    if (jobs.has(job.name)) throw new ConfigError(`Two jobs are named "${job.name}".`)
    if (job.subscriber) throw new ConfigError(`"${job.name}" is a subscriber: pass it in \`subscribers\`.`)
    jobs.set(job.name, job)
  }
  const subscribers = options.subscribers ?? []
  for (const sub of subscribers) {
    if (jobs.has(sub.name)) {
      throw new ConfigError(`"${sub.name}" names two jobs or subscribers: they share one namespace.`)
    }
    jobs.set(sub.name, sub as unknown as AnyJob)
  }
  const recurring = options.recurring ?? []
  const taskNames = new Set<string>()
  for (const task of recurring) {
    if (taskNames.has(task.name)) throw new ConfigError(`Two recurring tasks are named "${task.name}".`)
    taskNames.add(task.name)
    if (task.job.subscriber) {
      throw new ConfigError(
        `Recurring task "${task.name}" runs subscriber "${task.job.name}": subscribers take events.`,
      )
    }
    if (jobs.get(task.job.name) !== task.job) {
      throw new ConfigError(
        `Recurring task "${task.name}" runs job "${task.job.name}", which is not in \`jobs\`.`,
      )
    }
  }
  const queueNames = [...new Set([...jobs.values()].map((job) => job.queue))].sort()
  const hooks =
    options.hooks === undefined ? [] : Array.isArray(options.hooks) ? options.hooks : [options.hooks]
  return Object.freeze({
    logger: options.logger ?? console,
    database,
    schema,
    jobs,
    subscribers: Object.freeze([...subscribers]),
    syncSubscriptions: options.subscribers !== undefined,
    events: Object.freeze({ ...EVENT_DEFAULTS, ...(options.events ?? {}) }),
    queues: queueNames,
    hooks: Object.freeze([...(hooks as Hooks[])]),
    onQuery: options.onQuery,
    tracing: options.tracing,
    maxPayloadBytes: options.maxPayloadBytes ?? 256 * 1024,
    drain: Object.freeze({ ...DRAIN_DEFAULTS, ...(options.drain ?? {}) }),
    maintenance: Object.freeze({ ...MAINTENANCE_DEFAULTS, ...(options.maintenance ?? {}) }),
    recurring: Object.freeze([...recurring]),
    syncRecurring: options.recurring !== undefined,
    wake: resolveWake(options.wake, env),
    queueSettings: Object.freeze(resolveQueues(queueNames, options.queues ?? {}, options.circuitBreaker)),
  })
}
