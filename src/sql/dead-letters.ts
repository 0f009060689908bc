import type { Statement } from '../db/types.js'
import { encodeControlled, type NewJob } from './enqueue.js'

/** Which dead letters an operation applies to: explicit ids, or every one matching queue/name. */
export interface DeadLetterFilter {
  ids?: readonly string[]
  queue?: string
  name?: string
  /** At most this many rows per call (bulk operations run in bounded slices). */
  limit: number
}

/** A dead letter, as `sluice.inspect.deadLetters()` returns it. */
export interface DeadLetterRow {
  id: string
  queue: string
  name: string
  payload: unknown
  priority: number
  attempts: number
  maxAttempts: number
  enqueuedAt: Date
  failedAt: Date
  lastError: { name?: string; message?: string; attempt?: number; at?: string } | null
  errors: unknown[]
}

const WHERE = `($1::bigint[] IS NULL OR d.id = ANY($1::bigint[]))
  AND ($2::text IS NULL OR d.queue = $2)
  AND ($3::text IS NULL OR d.name = $3)`

const values = (f: DeadLetterFilter): unknown[] => [f.ids ?? null, f.queue ?? null, f.name ?? null, f.limit]

export function listDeadLetters(t: string, f: DeadLetterFilter & { before?: string }): Statement {
  return {
    text: `SELECT d.id::text AS id, d.queue, d.name, d.payload, d.priority, d.attempts,
       d.max_attempts AS "maxAttempts", d.enqueued_at AS "enqueuedAt", d.failed_at AS "failedAt",
       d.last_error AS "lastError", d.errors
FROM ${t}.dead_letters d
WHERE ${WHERE} AND ($5::bigint IS NULL OR d.id < $5::bigint)
ORDER BY d.id DESC
LIMIT $4`,
    values: [...values(f), f.before ?? null],
  }
}

/** A dead letter a retry left where it was, and why (`unique key K held by job N`, …). */
export interface KeptDeadLetter {
  id: string
  reason: string
}

/** What a retry did with each dead letter it found: put back in its queue, or kept. */
export interface DeadLetterRetry {
  /** Ids of the dead letters now jobs again (due now, or blocked behind their concurrency key). */
  requeued: string[]
  /** Dead letters left in place: their unique key is held, or their concurrency key is full. */
  kept: KeptDeadLetter[]
}

/** One row of `requeue_dead_letters`: `enqueued` or `blocked` (requeued), or `kept` with a reason. */
export interface RequeuedRow {
  id: string
  status: 'enqueued' | 'blocked' | 'kept'
  reason: string | null
}

/**
 * Puts dead letters back in their queue (rows built from them as for enqueue, each with its
 * dead letter's id), through the same enqueue as new jobs: attempts start again, limits and
 * uniqueness apply, the id and the error history are kept. A dead letter whose job cannot be
 * written (its key held) stays a dead letter, in the same statement: none is lost to a race.
 */
export function requeueDeadLetters(t: string, rows: readonly NewJob[]): Statement {
  return {
    text: `SELECT id, status, reason FROM ${t}.requeue_dead_letters($1::jsonb)`,
    values: [encodeControlled(rows)],
  }
}

export function discardDeadLetters(t: string, f: DeadLetterFilter): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.dead_letters d
  WHERE d.id IN (SELECT d.id FROM ${t}.dead_letters d WHERE ${WHERE} ORDER BY d.id LIMIT $4 FOR UPDATE SKIP LOCKED)
  RETURNING d.id
), steps AS (
  -- A discarded job's steps go with it.
  DELETE FROM ${t}.job_steps s USING gone WHERE s.job_id = gone.id
)
SELECT id::text AS id FROM gone`,
    values: values(f),
  }
}
