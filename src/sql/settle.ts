import type { Statement } from '../db/types.js'

export interface Completion {
  id: string
  token: string
  status: 'completed' | 'expired'
  durationMs: number | null
}

export interface Failure {
  id: string
  token: string
  error: { name: string; message: string }
  /** Backoff before the next attempt. */
  delayMs: number
  /** Dead-letter now, whatever attempts remain. */
  final: boolean
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
const HISTORY = 10

/**
 * Settles a batch in one statement. Every row is matched on (id, lease token), so a late
 * ack from a drain whose lease ran out changes nothing. Completed and expired jobs move
 * to the archive; failed ones are rescheduled with their backoff or, out of attempts (or
 * failed permanently), moved to the dead letters with their error history; unstarted
 * ones are handed back with the attempt uncounted.
 */
export function settle(t: string, p: SettleParams): Statement {
  const finish = p.finish
  return {
    text: `WITH ok AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS a(i bigint, t uuid, s text, d integer)
), ko AS (
  SELECT i, t, d, f, e || jsonb_build_object('at', now()) AS e
  FROM jsonb_to_recordset($2::jsonb) AS a(i bigint, t uuid, e jsonb, d bigint, f boolean)
), back AS (
  SELECT * FROM jsonb_to_recordset($3::jsonb) AS a(i bigint, t uuid, r timestamptz)
), done AS (
  DELETE FROM ${t}.jobs j USING ok WHERE j.id = ok.i AND j.lease_token = ok.t
  RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.enqueued_at, ok.s, ok.d
), archived AS (
  INSERT INTO ${t}.archive (id, queue, name, payload, priority, attempts, max_attempts, status, enqueued_at, duration_ms)
  SELECT id, queue, name, payload, priority, attempts, max_attempts, s, enqueued_at, d FROM done
  RETURNING 1
), dead AS (
  DELETE FROM ${t}.jobs j USING ko
  WHERE j.id = ko.i AND j.lease_token = ko.t AND (ko.f OR j.attempts >= j.max_attempts)
  RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.enqueued_at,
            ko.e || jsonb_build_object('attempt', j.attempts) AS e, j.errors
), buried AS (
  INSERT INTO ${t}.dead_letters (id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, last_error, errors)
  SELECT id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, e,
         jsonb_path_query_array(errors || jsonb_build_array(e), '$[last - ${HISTORY - 1} to last]')
  FROM dead
  ON CONFLICT (id) DO UPDATE SET attempts = excluded.attempts, failed_at = now(), last_error = excluded.last_error,
    errors = excluded.errors, payload = excluded.payload
  RETURNING 1
), retried AS (
  UPDATE ${t}.jobs j
  SET run_at = now() + ko.d * interval '1 millisecond', lease_token = NULL, leased_by = NULL,
      last_error = ko.e || jsonb_build_object('attempt', j.attempts),
      errors = jsonb_path_query_array(j.errors || jsonb_build_array(ko.e || jsonb_build_object('attempt', j.attempts)), '$[last - ${HISTORY - 1} to last]')
  FROM ko
  WHERE j.id = ko.i AND j.lease_token = ko.t AND NOT (ko.f OR j.attempts >= j.max_attempts)
  RETURNING 1
), returned AS (
  UPDATE ${t}.jobs j
  SET run_at = least(back.r, now()), attempts = greatest(j.attempts - 1, 0), lease_token = NULL, leased_by = NULL
  FROM back WHERE j.id = back.i AND j.lease_token = back.t
  RETURNING 1
)${
      finish
        ? `, gone AS (
  DELETE FROM ${t}.invocations WHERE id = $4
)`
        : ''
    }
SELECT (SELECT count(*) FROM archived)::int AS completed,
       (SELECT count(*) FROM retried)::int AS retried,
       (SELECT count(*) FROM buried)::int AS dead,
       (SELECT count(*) FROM returned)::int AS handed_back,
       ${
         finish
           ? `(SELECT count(*) FROM (SELECT 1 FROM ${t}.jobs WHERE queue = ANY($5::text[]) AND run_at <= now() LIMIT ${READY_CAP}) r)::int`
           : 'NULL::int'
       } AS ready`,
    values: [
      JSON.stringify(p.completions.map((c) => ({ i: c.id, t: c.token, s: c.status, d: c.durationMs }))),
      JSON.stringify(
        p.failures.map((f) => ({ i: f.id, t: f.token, e: f.error, d: Math.round(f.delayMs), f: f.final })),
      ),
      JSON.stringify(p.handBacks.map((h) => ({ i: h.id, t: h.token, r: h.dueAt.toISOString() }))),
      ...(finish ? [finish.invocationId, finish.queues] : []),
    ],
  }
}
