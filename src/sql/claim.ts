import type { Statement } from '../db/types.js'

export interface ClaimParams {
  queues: readonly string[]
  limit: number
  /** How long the claimed jobs stay invisible to other drains. */
  leaseMs: number
  invocationId: string
  invocationPriority: number
  jobsDone: number
  /** Names of the subscribers this drain knows: their claimed jobs say whether the event was processed. */
  subscribers?: readonly string[]
  /** Relay up to this many pending outbox entries first, in the same statement. */
  relay?: number
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
  /** For a subscriber's job: its event is already marked processed by this subscriber. */
  processed?: boolean
}

/**
 * Claims up to `limit` due jobs across `queues` in (priority, run_at, id) order: one call of
 * the claim function (migrations/0005_claim_settle.sql). Each queue is walked on the claim index
 * with FOR UPDATE SKIP LOCKED; paused, tripped, held and higher-priority-served queues are
 * skipped, single-consumer queues need their lease, global caps are respected; the winners
 * get a fresh lease token, one more attempt and an invisibility window, and the drain's
 * invocation lease is registered or renewed on the way. A job with no attempts left whose
 * lease ran out is never claimed again: maintenance dead-letters it.
 */
export function claim(t: string, p: ClaimParams): Statement {
  const { text, values } = claimSource(t, p, 0)
  return { text: `SELECT * FROM ${text}`, values }
}

/**
 * The claim as a FROM item (`… AS c`) whose parameters are numbered after `offset`:
 * `claim` selects from it, `settleAndClaim` joins it after a settle.
 */
export function claimSource(t: string, p: ClaimParams, offset: number): Statement {
  const values: unknown[] = [
    p.queues,
    p.limit,
    Math.ceil(p.leaseMs),
    p.invocationId,
    p.invocationPriority,
    p.jobsDone,
  ]
  const $ = (n: number): string => `$${offset + n}`
  const args = `${$(1)}::text[], ${$(2)}::integer, ${$(3)}::bigint, ${$(4)}::text, ${$(5)}::integer, ${$(6)}::integer`
  let source = `${t}.claim(${args})`
  if (p.relay !== undefined && p.relay > 0) {
    // Pending outbox entries are relayed first (relay_and_claim): the claim sees their jobs.
    values.push(p.relay)
    source = `${t}.relay_and_claim(${$(values.length)}::integer, ${args})`
  }
  if (!p.subscribers?.length) return { text: `${source} c`, values }
  // Subscribers' jobs say whether their event is already processed: the drain skips those.
  values.push(p.subscribers)
  return {
    text: `(SELECT c.*, (c.name = ANY (${$(values.length)}::text[]) AND EXISTS (
  SELECT 1 FROM ${t}.processed_events e WHERE e.event_id = c.payload->>'eventId' AND e.subscriber = c.name)) AS processed
FROM ${source} c) c`,
    values,
  }
}
