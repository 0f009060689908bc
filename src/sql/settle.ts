import type { Statement } from '../db/types.js'
import { type ClaimParams, type ClaimRow, claimSource } from './claim.js'

export interface Completion {
  id: string
  token: string
  status: 'completed' | 'expired'
  durationMs: number | null
  /** How long the job waited once due. */
  waitMs: number
  /** A subscriber's run that completed: recorded as processed by the settle statement. */
  mark?: { eventId: string; subscriber: string }
}

export interface Failure {
  id: string
  token: string
  error: { name: string; message: string }
  /** Backoff before the next attempt. */
  delayMs: number
  /** Dead-letter now, whatever attempts remain. */
  final: boolean
  durationMs: number | null
  waitMs: number
  /** Set for single-consumer queues: the job keeps its place and the queue is held instead. */
  keepPlace?: Date
}

export interface HandBack {
  id: string
  token: string
  /** When the job was due before it was claimed: it keeps its place in the queue. */
  dueAt: Date
}

export interface SettleParams {
  completions: readonly Completion[]
  failures: readonly Failure[]
  handBacks: readonly HandBack[]
  /** Present on a drain's last statement: deregister the invocation and count what is left. */
  finish?: { invocationId: string; queues: readonly string[] }
}

export interface SettleRow {
  completed: number
  retried: number
  dead: number
  handed_back: number
  /** Due jobs left in the drained queues, counted up to READY_CAP; null unless finishing. */
  ready: number | null
}

export const READY_CAP = 1000

/**
 * Settles a batch in one call of the settle function (migrations/0005_claim_settle.sql). Every
 * row is matched on (id, lease token), so a late ack from a drain whose lease ran out changes
 * nothing. Completed and expired jobs move to the archive; failed ones are rescheduled with
 * their backoff or, out of attempts (or failed permanently), moved to the dead letters with
 * their error history; unstarted ones are handed back with the attempt uncounted. Slots,
 * locks, batch counters, circuit breakers and job stats are updated on the way.
 */
export function settle(t: string, p: SettleParams): Statement {
  const { cte, call, values } = settleParts(t, p)
  return { text: `${cte}SELECT * FROM ${call}`, values }
}

/**
 * A settle followed by a claim: the settle's counts on every row, then a claim row (see ClaimRow),
 * or nulls when the claim returned none.
 */
export type SettleAndClaimRow = SettleRow & (ClaimRow | { id: null; queue: null; name: null })

/**
 * Settles one batch and claims the next in one statement: the settle function runs first
 * (the lateral claim depends on its row), so the claim sees the slots, locks and breaker
 * state the settle left. Every row carries the settle's counts; with nothing claimed there
 * is one row whose job columns are null.
 */
export function settleAndClaim(t: string, s: SettleParams, c: ClaimParams): Statement {
  const { cte, call, values } = settleParts(t, s)
  const source = claimSource(t, c, values.length)
  return {
    text: `${cte}SELECT s.completed, s.retried, s.dead, s.handed_back, s.ready, k.*
FROM ${call} s
LEFT JOIN LATERAL (SELECT c.* FROM ${source.text} WHERE s.completed IS NOT NULL) k ON true`,
    values: [...values, ...source.values],
  }
}

function settleParts(t: string, p: SettleParams): { cte: string; call: string; values: unknown[] } {
  const call = `${t}.settle($1::jsonb, $2::jsonb, $3::jsonb, $4::text, $5::boolean, $6::text[])`
  const marks = p.completions.flatMap((c) =>
    c.status === 'completed' && c.mark ? [{ e: c.mark.eventId, s: c.mark.subscriber }] : [],
  )
  const values: unknown[] = [
    JSON.stringify(
      p.completions.map((c) => ({ i: c.id, t: c.token, s: c.status, d: c.durationMs, w: c.waitMs })),
    ),
    JSON.stringify(
      p.failures.map((f) => ({
        i: f.id,
        t: f.token,
        e: f.error,
        d: Math.round(f.delayMs),
        f: f.final,
        r: f.keepPlace?.toISOString() ?? null,
        du: f.durationMs,
        w: f.waitMs,
      })),
    ),
    JSON.stringify(p.handBacks.map((h) => ({ i: h.id, t: h.token, r: h.dueAt.toISOString() }))),
    p.finish?.invocationId ?? null,
    p.finish !== undefined,
    p.finish?.queues ?? [],
  ]
  if (marks.length === 0) return { cte: '', call, values }
  // Subscribers' completed runs are marked processed in the same statement. A run whose lease
  // was lost is marked too: its handler did run to completion. Key order, as every writer of
  // marks takes them, so two settles never wait on each other in a cycle.
  values.push(JSON.stringify(marks))
  return {
    cte: `WITH marked AS (
  INSERT INTO ${t}.processed_events (event_id, subscriber)
  SELECT DISTINCT m.e, m.s FROM jsonb_to_recordset($7::jsonb) AS m(e text, s text)
  ORDER BY 1, 2
  ON CONFLICT DO NOTHING
  RETURNING 1
)
`,
    call,
    values,
  }
}
