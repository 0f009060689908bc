import type { Statement } from '../db/types.js'
import { type ClaimParams, type ClaimRow, claimSource } from './claim.js'

export interface Completion {
  id: string
  token: string
  status: 'completed' | 'expired'
  durationMs: number | null
  /** How long the job waited once due. */
  waitMs: number
  /** From the claim that admitted it to its start (null when unknown). */
  lagMs?: number | null
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
  lagMs?: number | null
  /** A handler's SlowDownError: its partition admits nothing for this long. */
  slowDownMs?: number
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
  finish?: {
    invocationId: string
    queues: readonly string[]
    /**
     * Also hand back every job still leased to this invocation that this settle does not name:
     * jobs taken by a claim whose reply was lost with its connection (see SettleRow.swept).
     */
    sweep?: boolean
  }
}

export interface SettleRow {
  completed: number
  retried: number
  dead: number
  handed_back: number
  /** Due jobs left in the drained queues, counted up to READY_CAP; null unless finishing. */
  ready: number | null
  /** With `finish.sweep`: how many of handed_back were jobs a lost claim had taken. */
  swept?: number
}

export const READY_CAP = 1000

/**
 * Settles a batch in one call of the settle function (migrations/functions/settle.sql). Every
 * row is matched on (id, lease token), so a late ack from a drain whose lease ran out changes
 * nothing. Completed and expired jobs move to the archive; failed ones are rescheduled with
 * their backoff or, out of attempts (or failed permanently), moved to the dead letters with
 * their error history; unstarted ones are handed back with the attempt uncounted. Slots,
 * locks, batch counters, circuit breakers and job stats are updated on the way.
 */
export function settle(t: string, p: SettleParams): Statement {
  const { cte, call, values } = settleParts(t, p)
  if (!p.finish?.sweep) return { text: `${cte}SELECT * FROM ${call}`, values }
  return {
    text: `${cte}SELECT s.*, jsonb_array_length((SELECT list FROM orphans)) AS swept FROM ${call} s`,
    values,
  }
}

/**
 * A settle followed by a claim: the settle's counts on every row, then a claim row (see ClaimRow),
 * or nulls when the claim returned none.
 */
export type SettleAndClaimRow = SettleRow & (ClaimRow | { id: null; queue: null; name: null; more: null })

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

/** The settle's completions, as settle_completions (migrations/functions/settle_records.sql) reads them. */
export function encodeCompletions(completions: readonly Completion[]): string {
  return JSON.stringify(
    completions.map((c) => ({
      id: c.id,
      token: c.token,
      status: c.status,
      duration_ms: c.durationMs,
      wait_ms: c.waitMs,
      lag_ms: c.lagMs ?? null,
    })),
  )
}

/** The settle's failures, as settle_failures (migrations/functions/settle_records.sql) reads them. */
export function encodeFailures(failures: readonly Failure[]): string {
  return JSON.stringify(
    failures.map((f) => ({
      id: f.id,
      token: f.token,
      error: f.error,
      delay_ms: Math.round(f.delayMs),
      final: f.final,
      keep_place: f.keepPlace?.toISOString() ?? null,
      duration_ms: f.durationMs,
      wait_ms: f.waitMs,
      lag_ms: f.lagMs ?? null,
      slow_down_ms: f.slowDownMs ?? null,
    })),
  )
}

/** The settle's hand-backs, as settle_hand_backs (migrations/functions/settle_records.sql) reads them. */
export function encodeHandBacks(handBacks: readonly HandBack[]): string {
  return JSON.stringify(handBacks.map((h) => ({ id: h.id, token: h.token, due_at: h.dueAt.toISOString() })))
}

function settleParts(t: string, p: SettleParams): { cte: string; call: string; values: unknown[] } {
  const marks = p.completions.flatMap((c) =>
    c.status === 'completed' && c.mark ? [{ e: c.mark.eventId, s: c.mark.subscriber }] : [],
  )
  const values: unknown[] = [
    encodeCompletions(p.completions),
    encodeFailures(p.failures),
    encodeHandBacks(p.handBacks),
    p.finish?.invocationId ?? null,
    p.finish !== undefined,
    p.finish?.queues ?? [],
  ]
  const ctes: string[] = []
  let back = '$3::jsonb'
  if (marks.length > 0) {
    // Subscribers' completed runs are marked processed in the same statement. A run whose lease
    // was lost is marked too: its handler did run to completion. Key order, as every writer of
    // marks takes them, so two settles never wait on each other in a cycle.
    values.push(JSON.stringify(marks))
    ctes.push(`marked AS (
  INSERT INTO ${t}.processed_events (event_id, subscriber)
  SELECT DISTINCT m.e, m.s FROM jsonb_to_recordset($${values.length}::jsonb) AS m(e text, s text)
  ORDER BY 1, 2
  ON CONFLICT DO NOTHING
  RETURNING 1
)`)
  }
  if (p.finish?.sweep) {
    // Jobs still leased to this invocation that this settle does not name were taken by a claim
    // whose reply never arrived: they go back with the rest, due now, attempt uncounted.
    values.push([...p.completions, ...p.failures, ...p.handBacks].map((r) => r.id))
    ctes.push(`orphans AS (
  SELECT coalesce(jsonb_agg(jsonb_build_object('id', j.id, 'token', j.lease_token, 'due_at', now())), '[]'::jsonb) AS list
  FROM ${t}.jobs j
  WHERE j.leased_by = $4::text AND j.lease_token IS NOT NULL AND j.id <> ALL ($${values.length}::bigint[])
)`)
    back = '$3::jsonb || (SELECT list FROM orphans)'
  }
  const call = `${t}.settle($1::jsonb, $2::jsonb, ${back}, $4::text, $5::boolean, $6::text[])`
  return { cte: ctes.length > 0 ? `WITH ${ctes.join(',\n')}\n` : '', call, values }
}
