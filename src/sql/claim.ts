import type { Statement } from '../db/types.js'

export interface ClaimParams {
  queues: readonly string[]
  limit: number
  /** How long the claimed jobs stay invisible to other drains. */
  leaseMs: number
  invocationId: string
  invocationPriority: number
  jobsDone: number
}

export interface ClaimedRow {
  id: string
  queue: string
  name: string
  payload: unknown
  priority: number
  attempts: number
  max_attempts: number
  token: string
  enqueued_at: Date
  /** When the job became due: its run_at before this claim. */
  due_at: Date
  /** The job's queue has a single active consumer: run its jobs one at a time, in order. */
  single_consumer: boolean
}

/**
 * Claims up to `limit` due jobs across `queues` in (priority, run_at, id) order: one call of
 * the claim function (migrations/0003_controls.sql). Each queue is walked on the claim index
 * with FOR UPDATE SKIP LOCKED; paused, tripped, held and higher-priority-served queues are
 * skipped, single-consumer queues need their lease, global caps are respected; the winners
 * get a fresh lease token, one more attempt and an invisibility window, and the drain's
 * invocation lease is registered or renewed on the way. A job with no attempts left whose
 * lease ran out is never claimed again: maintenance dead-letters it.
 */
export function claim(t: string, p: ClaimParams): Statement {
  return {
    text: `SELECT * FROM ${t}.claim($1::text[], $2::integer, $3::bigint, $4::text, $5::integer, $6::integer)`,
    values: [p.queues, p.limit, Math.ceil(p.leaseMs), p.invocationId, p.invocationPriority, p.jobsDone],
  }
}
