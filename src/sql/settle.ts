import type { Statement } from '../db/types.js'

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
  const call = `${t}.settle($1::jsonb, $2::jsonb, $3::jsonb, $4::text, $5::boolean, $6::text[])`
  const marks = p.completions.flatMap((c) =>
    c.status === 'completed' && c.mark ? [{ e: c.mark.eventId, s: c.mark.subscriber }] : [],
  )
  const statement = {
    text: `SELECT * FROM ${call}`,
    values: [
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
    ] as unknown[],
  }
  if (marks.length === 0) return statement
  // Subscribers' completed runs are marked processed in the same statement. A run whose lease
  // was lost is marked too: its handler did run to completion. Key order, as every writer of
  // marks takes them, so two settles never wait on each other in a cycle.
  return {
    text: `WITH marked AS (
  INSERT INTO ${t}.processed_events (event_id, subscriber)
  SELECT DISTINCT m.e, m.s FROM jsonb_to_recordset($7::jsonb) AS m(e text, s text)
  ORDER BY 1, 2
  ON CONFLICT DO NOTHING
  RETURNING 1
)
SELECT * FROM ${call}`,
    values: [...statement.values, JSON.stringify(marks)],
  }
}
