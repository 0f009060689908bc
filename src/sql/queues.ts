import type { Statement } from '../db/types.js'

/** A queue's settings from code, as syncQueues writes them. */
export interface QueueRow {
  name: string
  breaker: { threshold: number; baseMs: number; capMs: number } | null
  singleConsumer: boolean
  globalCap: number | null
}

/** Writes the queues' settings from code; state (paused, breaker counters) is left alone. */
export function syncQueues(t: string, queues: readonly QueueRow[]): Statement {
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
