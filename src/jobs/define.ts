import * as z from 'zod/mini'
import { $ZodType } from 'zod/v4/core'
import type { Queryable } from '../db/types.js'
import { ConfigError, toIssues } from '../errors.js'
import { firstIssue } from '../json.js'
import { nameSchema } from '../names.js'
import { given, ONCE } from '../validate.js'
import {
  type AdmissionOptions,
  type AdmissionPolicy,
  admissionSchema,
  resolveAdmission,
} from './admission.js'
import type { StepFunction, Steps } from './steps.js'

export const MIN_PRIORITY = 0
export const MAX_PRIORITY = 32767
/** Lower numbers run first; the default sits in the middle so jobs can go either side of it. */
export const DEFAULT_PRIORITY = 16384
export const DEFAULT_QUEUE = 'default'

export const prioritySchema = z.lazy(() => z.int().check(z.minimum(MIN_PRIORITY), z.maximum(MAX_PRIORITY)))

/** How far from now a job or event may be scheduled, either way: the largest `delay`, the reach of `runAt`. */
export const MAX_SCHEDULE_MS = 10 * 365 * 86_400_000

/** What a handler is told about the job it runs. */
export interface JobContext {
  id: string
  name: string
  queue: string
  /** 1 on the first run, 2 on the first retry, and so on. */
  attempt: number
  maxAttempts: number
  enqueuedAt: Date
  /** Fires at the job's timeout or the drain's deadline, whichever comes first. */
  signal: AbortSignal
  /** The moment `signal` fires at the latest. */
  deadline: Date
  /**
   * A durable step (docs/steps.md): runs its function once and stores its result, which re-runs
   * of the job get back without running it. `ctx.step.transaction` commits the step's database
   * effects with its record.
   */
  step: StepFunction
  /** Suspends the job for a duration (ms or `"30s"`, `"5m"`, `"2h"`, `"7d"`); it resumes past this step. */
  sleep: Steps['sleep']
  /** Suspends the job until a moment. */
  sleepUntil: Steps['sleepUntil']
  /** Suspends the job until a matching event is published (returned), or its timeout (null). */
  waitForEvent: Steps['waitForEvent']
  /** Enqueues a child job and suspends until it ends: its result, or ChildJobFailedError. */
  invoke: Steps['invoke']
}

export interface RetryPolicy {
  /** Total runs including the first, 1..1000. Default 5. */
  maxAttempts: number
  /** Delay before the first retry, ms. Default 1 s. */
  baseDelayMs: number
  /** Each retry waits `factor` times longer than the previous one. Default 2. */
  factor: number
  /** The longest delay, ms. Default 1 h. */
  maxDelayMs: number
  /** Randomises each delay by ±jitter (0..1). Default 0.2. */
  jitter: number
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 1_000,
  factor: 2,
  maxDelayMs: 3_600_000,
  jitter: 0.2,
}

export const retrySchema = z.lazy(() =>
  z.strictObject({
    maxAttempts: z.optional(z.int().check(z.minimum(1), z.maximum(1000))),
    baseDelayMs: z.optional(z.int().check(z.minimum(0))),
    factor: z.optional(z.number().check(z.minimum(1), z.maximum(100))),
    maxDelayMs: z.optional(z.int().check(z.minimum(0))),
    jitter: z.optional(z.number().check(z.minimum(0), z.maximum(1))),
  }),
)

export interface ConcurrencyOptions<I> {
  /** Jobs of one key queued or running at once, 1..10,000. */
  limit: number
  /** The key, from the validated input. Keys are global: jobs of several kinds can share one. */
  key(input: I): string
  /** A slot held this long without being released is reclaimed by maintenance, ms. Default 15 min. */
  ttl?: number
  /** At the limit: `block` (wait, promoted in order when a slot frees; default), `discard`, `raise`. */
  onConflict?: 'block' | 'discard' | 'raise'
}

export interface UniqueOptions<I> {
  key(input: I): string
  /** `until-executed` (default): one job per key from enqueue to completion. `while-executing`: one running at a time. */
  strategy?: 'until-executed' | 'while-executing'
  /** For until-executed duplicates: `reject` (ConflictError; default), `discard`, `log` (discard with a warning). */
  onConflict?: 'reject' | 'discard' | 'log'
  /** Last-resort expiry of an until-executed lock, ms. Default 24 h. */
  ttl?: number
}

export const concurrencySchema = z.lazy(() =>
  z.strictObject({
    limit: z.int().check(z.minimum(1), z.maximum(10_000)),
    key: z.custom<(input: unknown) => string>((v) => typeof v === 'function', 'must be a function'),
    ttl: z.optional(z.int().check(z.positive())),
    onConflict: z.optional(z.enum(['block', 'discard', 'raise'])),
  }),
)

export const uniqueSchema = z.lazy(() =>
  z.strictObject({
    key: z.custom<(input: unknown) => string>((v) => typeof v === 'function', 'must be a function'),
    strategy: z.optional(z.enum(['until-executed', 'while-executing'])),
    onConflict: z.optional(z.enum(['reject', 'discard', 'log'])),
    ttl: z.optional(z.int().check(z.positive())),
  }),
)

/** A retry option: a number of attempts or a (partial) policy. */
export const retryOptionSchema = z.lazy(() =>
  z.union([z.int().check(z.minimum(1), z.maximum(1000)), retrySchema]),
)

/** The full policy from a retry option, defaults filled in. */
export function resolveRetry(retry: number | Partial<RetryPolicy> | undefined): Readonly<RetryPolicy> {
  const policy =
    typeof retry === 'number'
      ? { ...DEFAULT_RETRY, maxAttempts: retry }
      : { ...DEFAULT_RETRY, ...(retry ?? {}) }
  return Object.freeze(policy)
}

/**
 * A schema the application gives (a job's input, a subscriber's payload): any zod 4 schema,
 * zod classic (`import * as z from 'zod'`) or zod/mini (`'zod/mini'`, a lighter bundle).
 */
export type InputSchema = z.core.$ZodType

/** Accepts any zod 4 schema, classic or mini. */
export const inputSchemaSchema = /* @__PURE__ */ z.custom<InputSchema>(
  // $ZodType from zod's core, not z.core.$ZodType: naming z.core keeps all of zod in the bundle.
  (value) => value instanceof $ZodType,
  'must be a zod schema',
)

// Pure: bundles without defineJob (the edge one) leave it out.
const definitionSchema = /* @__PURE__ */ z.lazy(() =>
  z.looseObject({
    name: nameSchema,
    queue: z.optional(nameSchema),
    input: inputSchemaSchema,
    retry: given(() => retryOptionSchema),
    timeout: z.optional(z.int().check(z.positive(), z.maximum(86_400_000))),
    queueTimeout: z.optional(z.int().check(z.positive())),
    priority: z.optional(prioritySchema),
    concurrency: given(() => concurrencySchema),
    unique: given(() => uniqueSchema),
    admission: given(() => admissionSchema),
    run: z.custom<(...args: unknown[]) => unknown>(
      (value) => typeof value === 'function',
      'must be a function',
    ),
  }),
)

// The hook a subscriber plugs into a job lives here, not in events/: events are built on jobs,
// so jobs/ never imports events/ (events/subscriber.ts re-exports these types).

/** What a subscriber job stores: the event, as published. */
export interface EventEnvelope<P = unknown> {
  topic: string
  eventId: string
  payload: P
  headers: Record<string, string>
  /** When the event was published (for the outbox: written), ISO 8601. */
  publishedAt: string
}

/** How the drain gives a subscriber its processed-mark transaction. */
export interface SubscriberRuntime {
  /** Undefined where the driver has no interactive transactions. */
  transaction:
    | (<T>(
        mark: { eventId: string; subscriber: string },
        fn: (tx: Queryable) => Promise<T>,
        signal: AbortSignal,
      ) => Promise<{ skipped: true } | { skipped: false; value: T }>)
    | undefined
}

/** What makes a job definition a subscriber. */
export interface SubscriberSpec {
  /** The topic pattern. */
  readonly topic: string
  /** The pattern as the regular expression the database matches `'.' || topic` against. */
  readonly regex: string
  /** The schema of the event payload. */
  readonly payload: InputSchema
  /** The subscriber's admission policy as the subscriptions table stores it, if it has one. */
  readonly admission?: Record<string, unknown> | undefined
  /** Runs the handler for a stored envelope (already parsed with the job's input schema). */
  handle(envelope: EventEnvelope, ctx: JobContext, runtime: SubscriberRuntime): Promise<unknown>
}

export interface JobOptions<S extends InputSchema> {
  name: string
  /** Default `default`. */
  queue?: string
  input: S
  /** Attempts (a number) or a full policy. */
  retry?: number | Partial<RetryPolicy>
  /** Longest a single run may take, ms. Default 30 s. The handler's signal fires then. */
  timeout?: number
  /** Longest a job may wait once due; beyond it the job is finished as expired, not run. */
  queueTimeout?: number
  /** Default priority of this job's enqueues (lower runs first). */
  priority?: number
  /** A counting semaphore per key: at most `limit` jobs of a key queued or running. */
  concurrency?: ConcurrencyOptions<z.output<S>>
  /** At most one job per key (until-executed) or one running per key (while-executing). */
  unique?: UniqueOptions<z.output<S>>
  /** Gates decided at claim time (throttle, concurrency, global cap, fairness, adaptive cap) and a dedupe key. */
  admission?: AdmissionOptions<z.output<S>>
  run: (input: z.output<S>, ctx: JobContext) => Promise<unknown> | unknown
}

/**
 * What enqueueing needs to know about a job, and all it needs: the part a JobDefinition
 * shares with a JobContract (defineContract), which carries no handler.
 */
export interface JobShape<S extends InputSchema = InputSchema> {
  readonly name: string
  readonly queue: string
  readonly input: S
  readonly retry: Readonly<RetryPolicy>
  readonly priority: number
  readonly concurrency?: Readonly<Required<ConcurrencyOptions<z.output<S>>>> | undefined
  readonly unique?: Readonly<Required<UniqueOptions<z.output<S>>>> | undefined
  readonly admission?: AdmissionPolicy<z.output<S>> | undefined
}

export interface JobDefinition<S extends InputSchema = InputSchema> extends JobShape<S> {
  readonly kind: 'job'
  readonly timeout: number
  readonly queueTimeout: number | undefined
  readonly concurrency: Readonly<Required<ConcurrencyOptions<z.output<S>>>> | undefined
  readonly unique: Readonly<Required<UniqueOptions<z.output<S>>>> | undefined
  readonly run: (input: z.output<S>, ctx: JobContext) => Promise<unknown> | unknown
  /** Set on subscribers (defineSubscriber): their jobs are written by publish, and the drain runs `subscriber.handle`. */
  readonly subscriber?: SubscriberSpec | undefined
}

export type AnyJob = JobDefinition<InputSchema>

/**
 * The input `enqueue` takes for J, refusing a subscriber (defineSubscriber) at the type level:
 * its jobs are written by `publish`, so no input fits one.
 */
export type EnqueueInput<J> = [J] extends [{ readonly subscriber: SubscriberSpec }] ? never : JobInput<J>
/** The input a job (or a contract) accepts at enqueue. */
export type JobInput<J> = J extends JobShape<infer S> ? z.input<S> : never

export const DEFAULT_TIMEOUT_MS = 30_000

/**
 * Declares a job: its name, queue, input schema, retry policy, limits and handler.
 * A contract's fields can be spread in: `defineJob({ ...welcomeEmailContract, run })`.
 */
export function defineJob<S extends InputSchema>(options: JobOptions<S>): JobDefinition<S> {
  const parsed = definitionSchema.safeParse(options, ONCE)
  if (!parsed.success) {
    const name = typeof options?.name === 'string' ? ` "${options.name}"` : ''
    throw new ConfigError(
      `Invalid job definition${name}${firstIssue(parsed.error.issues)}`,
      toIssues(parsed.error.issues),
    )
  }
  return Object.freeze({
    kind: 'job' as const,
    name: options.name,
    queue: options.queue ?? DEFAULT_QUEUE,
    input: options.input,
    retry: resolveRetry(options.retry),
    timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
    queueTimeout: options.queueTimeout,
    priority: options.priority ?? DEFAULT_PRIORITY,
    ...resolveControls(options),
    run: options.run,
  })
}

/** The delay before the retry that follows failed attempt `attempt` (1-based). */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const raw = Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.factor ** Math.max(0, attempt - 1))
  const spread = raw * policy.jitter
  return Math.max(0, Math.round(raw - spread + random() * 2 * spread))
}

/** Concurrency, uniqueness and admission settings with their defaults filled in. */
export function resolveControls<I>(options: {
  name?: string
  concurrency?: ConcurrencyOptions<I>
  unique?: UniqueOptions<I>
  admission?: AdmissionOptions<I>
}): {
  concurrency: Readonly<Required<ConcurrencyOptions<I>>> | undefined
  unique: Readonly<Required<UniqueOptions<I>>> | undefined
  admission: AdmissionPolicy<I> | undefined
} {
  if (options.admission && options.concurrency) {
    throw new ConfigError(
      `Job "${options.name}" declares both \`concurrency\` (a slot per key taken at enqueue) and \`admission\` ` +
        '(gates decided at claim): use admission.concurrency for a cap on running jobs per partition.',
    )
  }
  if (options.admission?.dedupe && options.unique) {
    throw new ConfigError(
      `Job "${options.name}" declares both \`unique\` and \`admission.dedupe\`: a dedupe key is an until-executed unique key; keep one.`,
    )
  }
  return {
    admission: resolveAdmission(options.admission),
    concurrency: options.concurrency
      ? Object.freeze({ ttl: 15 * 60_000, onConflict: 'block' as const, ...options.concurrency })
      : undefined,
    unique: options.unique
      ? Object.freeze({
          strategy: 'until-executed' as const,
          onConflict: 'reject' as const,
          ttl: 86_400_000,
          ...options.unique,
        })
      : undefined,
  }
}
