import * as z from 'zod/mini'
import { nameSchema } from '../names.js'
import { given } from '../validate.js'

export type { QueueStateRow } from '../sql/queues.js'

export interface CircuitBreakerOptions {
  /** Consecutive failures that trip the breaker. Default 5. */
  threshold: number
  /** First pause, ms; each further trip doubles it. Default 30 s. */
  baseMs: number
  /** Longest pause, ms. Default 600 s. */
  capMs: number
}

export interface QueueOptions {
  /** One drain at a time serves the queue (a lease row with TTL), jobs run one by one in order. */
  singleActiveConsumer?: boolean
  /** At most this many jobs of the queue leased at once, across all drains. */
  globalConcurrency?: number
  /** Auto-pause after consecutive failures; `false` disables it. Default on, 5 / 30 s / 600 s. */
  circuitBreaker?: false | Partial<CircuitBreakerOptions>
  /**
   * `false`: the queue's completed and expired jobs are deleted as they settle, with no archive
   * row: no result or timeline to read back once a job completed, and no completed-job views for
   * it, but the job stats still count every one. About a quarter less WAL per job. Failed jobs
   * still go to the dead letters. Default true.
   */
  archive?: boolean
}

export const DEFAULT_BREAKER: CircuitBreakerOptions = { threshold: 5, baseMs: 30_000, capMs: 600_000 }

/** One schema for a circuit breaker, whether set for every queue (top level) or for one. */
export const breakerSchema = z.lazy(() =>
  z.partial(
    z.strictObject({
      threshold: z.int().check(z.minimum(1), z.maximum(1000)),
      baseMs: z.int().check(z.minimum(1), z.maximum(86_400_000)),
      capMs: z.int().check(z.minimum(1), z.maximum(7 * 86_400_000)),
    }),
  ),
)

/** `false` turns the breaker off. */
export const breakerOptionSchema = z.lazy(() => z.union([z.literal(false), breakerSchema]))

export const queueOptionsSchema = z.lazy(() =>
  z.strictObject({
    singleActiveConsumer: z.optional(z.boolean()),
    globalConcurrency: z.optional(z.int().check(z.minimum(1), z.maximum(100_000))),
    circuitBreaker: given(() => breakerOptionSchema),
    archive: z.optional(z.boolean()),
  }),
)

export const queuesSchema = z.lazy(() => z.record(nameSchema, queueOptionsSchema))

export interface QueueSettings {
  name: string
  breaker: CircuitBreakerOptions | null
  singleConsumer: boolean
  globalCap: number | null
  archive: boolean
}

export function resolveQueues(
  names: readonly string[],
  options: Readonly<Record<string, QueueOptions>>,
  defaultBreaker: false | Partial<CircuitBreakerOptions> | undefined,
): QueueSettings[] {
  const all = [...new Set([...names, ...Object.keys(options)])].sort()
  return all.map((name) => {
    const o = options[name] ?? {}
    const breaker = o.circuitBreaker ?? defaultBreaker
    return {
      name,
      breaker:
        breaker === false ? null : { ...DEFAULT_BREAKER, ...(defaultBreaker || {}), ...(breaker ?? {}) },
      singleConsumer: o.singleActiveConsumer ?? false,
      globalCap: o.globalConcurrency ?? null,
      archive: o.archive ?? true,
    }
  })
}
