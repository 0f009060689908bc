import type { Statement } from '../db/types.js'

/** A queue's settings from code, as syncQueues writes them. */
export interface QueueRow {
  name: string
  breaker: { threshold: number; baseMs: number; capMs: number } | null
  singleConsumer: boolean
  globalCap: number | null
  /** False: the queue's completed and expired jobs are deleted as they settle, not archived. */
  archive: boolean
}

/** Writes the queues' settings from code; state (paused, breaker counters) is left alone. */
export function syncQueues(t: string, queues: readonly QueueRow[]): Statement {
  return {
    text: `INSERT INTO ${t}.queues AS c (name, breaker_threshold, breaker_base_ms, breaker_cap_ms, single_consumer, global_cap,
                              archive)
SELECT name, bt, bb, bc, sc, gc, ar
FROM jsonb_to_recordset($1::jsonb) AS s(name text, bt integer, bb bigint, bc bigint, sc boolean, gc integer, ar boolean)
ON CONFLICT (name) DO UPDATE
SET breaker_threshold = excluded.breaker_threshold, breaker_base_ms = excluded.breaker_base_ms,
    breaker_cap_ms = excluded.breaker_cap_ms, single_consumer = excluded.single_consumer, global_cap = excluded.global_cap,
    archive = excluded.archive
WHERE (c.breaker_threshold, c.breaker_base_ms, c.breaker_cap_ms, c.single_consumer, c.global_cap, c.archive)
      IS DISTINCT FROM (excluded.breaker_threshold, excluded.breaker_base_ms, excluded.breaker_cap_ms,
                        excluded.single_consumer, excluded.global_cap, excluded.archive)`,
    values: [
      JSON.stringify(
        queues.map((q) => ({
          name: q.name,
          bt: q.breaker?.threshold ?? null,
          bb: q.breaker?.baseMs ?? null,
          bc: q.breaker?.capMs ?? null,
          sc: q.singleConsumer,
          gc: q.globalCap,
          ar: q.archive,
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

/** A queue's stored state, as `sluice.inspect.queueStates()` returns it. */
export interface QueueStateRow {
  name: string
  paused: boolean
  pausedAt: Date | null
  breakerUntil: Date | null
  consecutiveFailures: number
  trips: number
  heldUntil: Date | null
  singleConsumer: boolean
  globalCap: number | null
  /** False: completed and expired jobs are not archived (the queue's `archive` setting). */
  archive: boolean
  leaseHolder: string | null
  leaseExpiresAt: Date | null
}

export function queueStates(t: string): Statement {
  return {
    text: `SELECT c.name, c.paused, c.paused_at AS "pausedAt", c.breaker_until AS "breakerUntil",
       c.consecutive_failures AS "consecutiveFailures", c.trips, c.held_until AS "heldUntil",
       c.single_consumer AS "singleConsumer", c.global_cap AS "globalCap", c.archive, l.holder AS "leaseHolder",
       l.expires_at AS "leaseExpiresAt"
FROM ${t}.queues c LEFT JOIN ${t}.queue_leases l ON l.queue = c.name
ORDER BY c.name`,
    values: [],
  }
}
