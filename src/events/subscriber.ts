import * as z from 'zod/mini'
import type { Queryable } from '../db/types.js'
import { ConfigError, SluiceError, toIssues, UnsupportedError } from '../errors.js'
import {
  type SubscriberAdmissionOptions,
  subscriberAdmissionRecord,
  subscriberAdmissionSchema,
} from '../jobs/admission.js'
import {
  DEFAULT_PRIORITY,
  DEFAULT_QUEUE,
  DEFAULT_TIMEOUT_MS,
  type EventEnvelope,
  type InputSchema,
  inputSchemaSchema,
  type JobContext,
  type JobDefinition,
  prioritySchema,
  type RetryPolicy,
  resolveRetry,
  retryOptionSchema,
  type SubscriberRuntime,
  type SubscriberSpec,
} from '../jobs/define.js'
import { firstIssue } from '../json.js'
import { nameSchema } from '../names.js'
import { given, ONCE } from '../validate.js'
import { patternRegex, patternSchema } from './topics.js'

export type { EventEnvelope, SubscriberRuntime, SubscriberSpec } from '../jobs/define.js'

/** The event a subscriber handles. */
export interface EventInfo {
  topic: string
  id: string
  headers: Readonly<Record<string, string>>
  publishedAt: Date
}

/** What a subscriber's handler is told: the job context, the event, and a transaction with the processed mark. */
export interface SubscriberContext extends JobContext {
  event: EventInfo
  /**
   * Runs `fn` inside an interactive transaction that first records this event as processed by
   * this subscriber: the writes `fn` makes and the mark commit together, or neither does. When
   * the event was already processed (a re-delivery, a concurrent run), nothing runs, the
   * transaction rolls back and the rest of the handler is skipped: the run ends as completed.
   * Once per run. Not available on Neon's HTTP driver (no interactive transactions): throws UNSUPPORTED.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
}

export interface SubscriberOptions<S extends InputSchema> {
  name: string
  /** A topic pattern: dot-separated words; `*` matches exactly one word, `#` zero or more. */
  topic: string
  /** Default `default`. */
  queue?: string
  /** Schema of the event payload. Default `z.unknown()`. */
  input?: S
  retry?: number | Partial<RetryPolicy>
  /** Longest a single run may take, ms. Default 30 s. */
  timeout?: number
  queueTimeout?: number
  /** Priority of this subscriber's jobs (lower runs first). */
  priority?: number
  /** Gates decided at claim time for this subscriber's jobs, per partition read from the event. */
  admission?: SubscriberAdmissionOptions
  run: (payload: z.output<S>, ctx: SubscriberContext) => Promise<unknown> | unknown
}

/** A subscriber is a job whose input is the event envelope. */
export interface SubscriberDefinition<S extends InputSchema = InputSchema>
  extends JobDefinition<z.ZodMiniType<EventEnvelope<z.output<S>>>> {
  readonly subscriber: SubscriberSpec
}

export type AnySubscriber = SubscriberDefinition<InputSchema>

/** Thrown by ctx.transaction when the event was already processed; ends the run as completed. */
export class AlreadyProcessedError extends SluiceError {
  constructor(eventId: string, subscriber: string) {
    super('ALREADY_PROCESSED', `Event ${eventId} was already processed by subscriber "${subscriber}"`)
  }
}

const optionsSchema = z.lazy(() =>
  z.strictObject({
    name: nameSchema,
    topic: patternSchema,
    queue: z.optional(nameSchema),
    input: z.optional(inputSchemaSchema),
    retry: given(() => retryOptionSchema),
    timeout: z.optional(z.int().check(z.positive(), z.maximum(86_400_000))),
    queueTimeout: z.optional(z.int().check(z.positive())),
    priority: z.optional(prioritySchema),
    admission: given(() => subscriberAdmissionSchema),
    run: z.custom<(...args: unknown[]) => unknown>(
      (value) => typeof value === 'function',
      'must be a function',
    ),
  }),
)

const envelopeSchema = (payload: InputSchema) =>
  z.object({
    topic: z.string(),
    eventId: z.string(),
    payload,
    headers: z.record(z.string(), z.string()),
    publishedAt: z.string(),
  })

const noRuntime: SubscriberRuntime = { transaction: undefined }

export function isSubscriber(value: unknown): value is AnySubscriber {
  return typeof value === 'object' && value !== null && (value as AnySubscriber).subscriber !== undefined
}

/**
 * Declares a subscriber: a handler for the events whose topic matches `topic`. Each matching
 * publish writes one job for it on its queue, run by the drains like any job (retries, dead
 * letters, hooks). Register it with `createSluice({ subscribers })`.
 */
export function defineSubscriber<S extends InputSchema = z.ZodMiniUnknown>(
  options: SubscriberOptions<S>,
): SubscriberDefinition<S> {
  const parsed = optionsSchema.safeParse(options, ONCE)
  if (!parsed.success) {
    const name = typeof options?.name === 'string' ? ` "${options.name}"` : ''
    throw new ConfigError(
      `Invalid subscriber${name}${firstIssue(parsed.error.issues)}`,
      toIssues(parsed.error.issues),
    )
  }
  const name = options.name
  const payload: InputSchema = options.input ?? z.unknown()
  const spec: SubscriberSpec = Object.freeze({
    topic: options.topic,
    regex: patternRegex(options.topic),
    payload,
    admission: options.admission ? subscriberAdmissionRecord(name, options.admission) : undefined,
    async handle(envelope: EventEnvelope, ctx: JobContext, runtime: SubscriberRuntime) {
      let used = false
      let skipped: AlreadyProcessedError | undefined
      // The run's context with the event and the transaction on top: made from it (not copied),
      // so that its signal and steps stay the run's own, made when first read.
      const context: SubscriberContext = Object.assign(Object.create(ctx) as JobContext, {
        event: {
          topic: envelope.topic,
          id: envelope.eventId,
          headers: envelope.headers,
          publishedAt: new Date(envelope.publishedAt),
        },
        async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
          if (!runtime.transaction) {
            throw new UnsupportedError(
              'ctx.transaction needs interactive transactions (pg, Neon Pool, PGlite); ' +
                "Neon's HTTP driver has none: there, handlers are at-least-once.",
            )
          }
          if (used) throw new UnsupportedError('ctx.transaction can be called once per run.')
          used = true
          const result = await runtime.transaction(
            { eventId: envelope.eventId, subscriber: name },
            fn,
            ctx.signal,
          )
          if (result.skipped) {
            skipped = new AlreadyProcessedError(envelope.eventId, name)
            throw skipped
          }
          return result.value
        },
      }) as SubscriberContext
      try {
        return await options.run(envelope.payload as z.output<S>, context)
      } catch (error) {
        if (skipped !== undefined && error === skipped) return undefined
        throw error
      }
    },
  })
  const definition = {
    kind: 'job' as const,
    name,
    queue: options.queue ?? DEFAULT_QUEUE,
    input: envelopeSchema(payload) as unknown as z.ZodMiniType<EventEnvelope<z.output<S>>>,
    retry: resolveRetry(options.retry),
    timeout: options.timeout ?? DEFAULT_TIMEOUT_MS,
    queueTimeout: options.queueTimeout,
    priority: options.priority ?? DEFAULT_PRIORITY,
    concurrency: undefined,
    unique: undefined,
    subscriber: spec,
    run: (envelope: EventEnvelope<z.output<S>>, ctx: JobContext) => spec.handle(envelope, ctx, noRuntime),
  }
  return Object.freeze(definition)
}
