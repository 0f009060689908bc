import * as z from 'zod'
import type { Statement } from '../db/types.js'
import { nameSchema } from '../names.js'

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
}

export const DEFAULT_BREAKER: CircuitBreakerOptions = { threshold: 5, baseMs: 30_000, capMs: 600_000 }

/** One schema for a circuit breaker, whether set for every queue (top level) or for one. */
export const breakerSchema = z
  .object({
    threshold: z.number().int().min(1).max(1000),
    baseMs: z.number().int().min(1).max(86_400_000),
    capMs: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400_000),
  })
  .partial()
  .strict()

/** `false` turns the breaker off. */
export const breakerOptionSchema = z.union([z.literal(false), breakerSchema])

export const queueOptionsSchema = z
  .object({
    singleActiveConsumer: z.boolean().optional(),
    globalConcurrency: z.number().int().min(1).max(100_000).optional(),
    circuitBreaker: breakerOptionSchema.optional(),
  })
  .strict()

export const queuesSchema = z.record(nameSchema, queueOptionsSchema)

export interface QueueSettings {
  name: string
  breaker: CircuitBreakerOptions | null
  singleConsumer: boolean
  globalCap: number | null
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
    }
  })
}

/** Writes the queues' settings from code; state (paused, breaker counters) is left alone. */
export function syncQueues(t: string, queues: readonly QueueSettings[]): Statement {
  return {
    text: `INSERT INTO ${t}.queues AS c (name, breaker_threshold, breaker_base_ms, breaker_cap_ms, single_consumer, global_cap)
SELECT name, bt, bb, bc, sc, gc
FROM jsonb_to_recordset($1::jsonb) AS s(name text, bt integer, bb bigint, bc bigint, sc boolean, gc integer)
ON CONFLICT (name) DO UPDATE
SET breaker_threshold = excluded.breaker_threshold, breaker_base_ms = excluded.breaker_base_ms,
    breaker_cap_ms = excluded.breaker_cap_ms, single_consumer = excluded.single_consumer, global_cap = excluded.global_cap
WHERE (c.breaker_threshold, c.breaker_base_ms, c.breaker_cap_ms, c.single_consumer, c.global_cap)
      IS DISTINCT FROM (excluded.breaker_threshold, excluded.breaker_base_ms, excluded.breaker_cap_ms,
                        excluded.single_consumer, excluded.global_cap)`,
    values: [
      JSON.stringify(
        queues.map((q) => ({
          name: q.name,
          bt: q.breaker?.threshold ?? null,
          bb: q.breaker?.baseMs ?? null,
          bc: q.breaker?.capMs ?? null,
          sc: q.singleConsumer,
          gc: q.globalCap,
        })),
      ),
    ],
  }
}

/** A manual pause: claims skip the queue until resume(), whatever the breaker does. */
export function pauseQueue(t: string, queue: string): Statement {
  return {
    text: `INSERT INTO ${t}.queues AS c (name, paused, paused_at) VALUES ($1, true, now())
ON CONFLICT (name) DO UPDATE SET paused = true, paused_at = coalesce(c.paused_at, now())
RETURNING name`,
    values: [queue],
  }
}

/** Lifts a manual pause and closes the circuit breaker. */
export function resumeQueue(t: string, queue: string): Statement {
  return {
    text: `UPDATE ${t}.queues
SET paused = false, paused_at = NULL, breaker_until = NULL, consecutive_failures = 0, trips = 0, held_until = NULL
WHERE name = $1
RETURNING name`,
    values: [queue],
  }
}

export interface QueueStateRow {
  name: string
  paused: boolean
  paused_at: Date | null
  breaker_until: Date | null
  consecutive_failures: number
  trips: number
  held_until: Date | null
  single_consumer: boolean
  global_cap: number | null
  lease_holder: string | null
  lease_expires_at: Date | null
}

export function queueStates(t: string): Statement {
  return {
    text: `SELECT c.name, c.paused, c.paused_at, c.breaker_until, c.consecutive_failures, c.trips, c.held_until,
       c.single_consumer, c.global_cap, l.holder AS lease_holder, l.expires_at AS lease_expires_at
FROM ${t}.queues c LEFT JOIN ${t}.queue_leases l ON l.queue = c.name
ORDER BY c.name`,
    values: [],
  }
}
