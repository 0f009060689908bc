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
  /**
   * Names of jobs the drain cannot finish in its time left: in each queue the claim stops before
   * the first of them and reports the queue in a row with a null id.
   */
  defer?: readonly string[]
}

/** Durations recorded in job stats, read with a drain's first claim (see `withDurations`). */
export interface DurationsRead {
  /** Job names to learn about. */
  names: readonly string[]
  /** How far back to look, ms. */
  sinceMs: number
  /** The most attempts' durations read, so the read stays small whatever the traffic. */
  sample: number
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
  /**
   * Run this job in order (a control asked for it; today a single-consumer queue): its queue's
   * jobs one at a time in claim order, a failure keeping its place, and no claim ahead of their
   * settle.
   */
  in_order: boolean
  /** For a subscriber's job: its event is already marked processed by this subscriber. */
  processed?: boolean
  /** See ClaimRow: the same on every row of one claim. */
  more: boolean
  /** The W3C trace context the job was enqueued with (see NewJob's `traceContext`); null when none. */
  trace_context: string | null
}

/**
 * A claim's row (the `claim_row` type, migrations/functions/claim.sql): a claimed job; or (null id) a
 * queue the claim stopped in before a job the drain cannot fit in its time left, with that job's
 * name; or (null id and name) a row that only carries `more`. `more`, the same on every row: the
 * claim picked as many jobs as it was asked for, or dropped some it picked after picking (a
 * control said no, e.g. a key held by another job it claimed), so a claim made once its jobs
 * settle may find more. Fewer rows than asked for, with `more` false: the queues had no more.
 */
export type ClaimRow =
  | ClaimedRow
  | { id: null; queue: string; name: string; more: boolean }
  | { id: null; queue: null; name: null; more: boolean }

/** The first row of a claim made with `durations`: per job name, the 99th-percentile duration recorded, ms. */
export interface DurationsColumn {
  durations?: Record<string, number> | null
}

/**
 * Claims up to `limit` due jobs across `queues` in (priority, run_at, id) order: one call of
 * the claim function (migrations/functions/claim.sql). Each queue is walked on the claim index
 * with FOR UPDATE SKIP LOCKED; paused, tripped, held and higher-priority-served queues are
 * skipped, single-consumer queues need their lease, global caps are respected; the winners
 * get a fresh lease token, one more attempt and an invisibility window, and the drain's
 * invocation lease is registered or renewed on the way. A job with no attempts left whose
 * lease ran out is never claimed again: maintenance dead-letters it.
 */
export function claim(t: string, p: ClaimParams, durations?: DurationsRead): Statement {
  const { text, values } = claimSource(t, p, 0)
  if (!durations) return { text: `SELECT * FROM ${text}`, values }
  // What other processes saw these jobs take, on the first row only (and read only when there is
  // one): a drain that has not seen a job run yet still knows how long it takes.
  const n = values.length
  return {
    text: `SELECT c.*, CASE WHEN row_number() OVER () = 1 THEN (
  SELECT jsonb_object_agg(r.name, r.ms) FROM (
    SELECT s.name, percentile_disc(0.99) WITHIN GROUP (ORDER BY s.duration_ms) AS ms
    FROM (SELECT name, duration_ms FROM ${t}.job_stats_runs
          WHERE finished_at > now() - $${n + 2}::bigint * interval '1 millisecond' AND status = 'completed'
            AND duration_ms IS NOT NULL AND name = ANY ($${n + 1}::text[])
          LIMIT $${n + 3}::integer) s
    GROUP BY s.name) r
) END AS durations
FROM ${text}`,
    values: [...values, durations.names, Math.ceil(durations.sinceMs), durations.sample],
  }
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
    p.defer ?? [],
  ]
  const $ = (n: number): string => `$${offset + n}`
  const args = `${$(1)}::text[], ${$(2)}::integer, ${$(3)}::bigint, ${$(4)}::text, ${$(5)}::integer, ${$(6)}::integer, ${$(7)}::text[]`
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
