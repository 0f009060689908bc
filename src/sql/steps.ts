import type { Statement } from '../db/types.js'
import type { NewJob } from './enqueue.js'
import { WAKE_OPENED, wakeWindowCtes } from './wake.js'

/** A step as job_steps stores it (migrations/0019_durable_steps.sql). */
export interface StepRow {
  seq: number
  name: string
  kind: 'run' | 'sleep' | 'event' | 'invoke'
  state: 'completed' | 'waiting' | 'failed'
  result: unknown
  error: { name: string; message: string; code?: string } | null
  attempts: number
  started_at: Date
  finished_at: Date | null
  wake_at: Date | null
  topic: string | null
  regex: string | null
  match: unknown
  child_id: string | null
  /** The stored result's size, bytes of JSON text (null when none). */
  result_bytes: number | null
}

const COLUMNS = `seq, name, kind, state, result, error, attempts, started_at, finished_at, wake_at, topic, regex,
  match, child_id::text AS child_id, octet_length(result::text) AS result_bytes`

/** A job's steps, in order. */
export function jobSteps(t: string, jobId: string): Statement {
  return {
    text: `SELECT ${COLUMNS} FROM ${t}.job_steps WHERE job_id = $1::bigint ORDER BY seq`,
    values: [jobId],
  }
}

export interface StepRecord {
  jobId: string
  token: string
  seq: number
  name: string
  kind: 'run' | 'sleep'
  state: 'completed' | 'failed'
  /** JSON text. */
  result: string | null
  error: { name: string; message: string; code?: string } | null
  startedAt: Date
  wakeAt: Date | null
}

/** Records a finished step under the job's lease (step_record); `recorded` false when refused. */
export function recordStep(t: string, r: StepRecord): Statement {
  return {
    text: `SELECT ${t}.step_record($1::bigint, $2::uuid, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::timestamptz,
  $10::timestamptz) AS recorded`,
    values: [
      r.jobId,
      r.token,
      r.seq,
      r.name,
      r.kind,
      r.state,
      r.result,
      r.error === null ? null : JSON.stringify(r.error),
      r.startedAt.toISOString(),
      r.wakeAt?.toISOString() ?? null,
    ],
  }
}

/** Holds the job's row for the rest of the caller's transaction, if the lease is still this run's. */
export function holdLease(t: string, jobId: string, token: string): Statement {
  return {
    text: `SELECT 1 AS held FROM ${t}.jobs WHERE id = $1::bigint AND lease_token = $2::uuid FOR SHARE`,
    values: [jobId, token],
  }
}

/**
 * Ends the run without settling it (step_suspend): the job is due again at `until` (the end of its
 * sleeps; now when null), or, while it has open waits, at their earliest timeout. `run_at` is null
 * when no wait has one (steps_never: a child job).
 */
export function suspendJob(t: string, jobId: string, token: string, until: Date | null): Statement {
  return {
    text: `SELECT nullif(run_at, ${t}.steps_never()) AS run_at, waiting FROM ${t}.step_suspend($1::bigint, $2::uuid, $3::timestamptz)`,
    values: [jobId, token, until?.toISOString() ?? null],
  }
}

export interface EventWait {
  jobId: string
  token: string
  seq: number
  name: string
  /** The topic pattern. */
  topic: string
  /** Its regex when it has wildcards; null when it has none (waits are then found by topic). */
  regex: string | null
  /** JSON text: the payload must contain it. */
  match: string
  timeout: Date | null
}

/** Records an event wait (step_wait_event): completed at once when the event is in the log. */
export function waitForEvent(t: string, w: EventWait): Statement {
  return {
    text: `SELECT state, result FROM ${t}.step_wait_event($1::bigint, $2::uuid, $3, $4, $5, $6, $7::jsonb,
  $8::timestamptz)`,
    values: [w.jobId, w.token, w.seq, w.name, w.topic, w.regex, w.match, w.timeout?.toISOString() ?? null],
  }
}

/** Resolves a wait whose timeout passed (step_wait_timeout): its state and result after. */
export function waitTimedOut(t: string, jobId: string, token: string, seq: number): Statement {
  return {
    text: `SELECT state, result FROM ${t}.step_wait_timeout($1::bigint, $2::uuid, $3)`,
    values: [jobId, token, seq],
  }
}

/**
 * Enqueues a child job for ctx.invoke and records the step that waits for it, in one statement
 * under the parent's lease: the parent's row counts one more open wait, the child carries its
 * parent, and the step names the child. No row when the lease was lost.
 */
export function invokeChild(
  t: string,
  parent: { jobId: string; token: string; seq: number; name: string },
  child: NewJob,
  /** Given: the same statement says whether to wake the child's queue (wakeWindowCtes). */
  wakeDebounceMs?: number,
): Statement {
  // The child's queue, once the child is written, for wakeWindowCtes.
  const wake =
    wakeDebounceMs === undefined
      ? ''
      : `, source AS (
  SELECT $5::text AS queue FROM child
), ${wakeWindowCtes(t, 'source', '$13')}`
  return {
    text: `WITH parent AS (
  UPDATE ${t}.jobs SET waiting = coalesce(waiting, 0) + 1
  WHERE id = $1::bigint AND lease_token = $2::uuid
  RETURNING id
), child AS (
  INSERT INTO ${t}.jobs (queue, name, payload, priority, max_attempts, run_at, trace_context, parent_id)
  SELECT $5, $6, $7::jsonb, $8, $9, coalesce($10::timestamptz, now() + $11::bigint * interval '1 millisecond'),
         $12::text, parent.id
  FROM parent
  RETURNING id, parent_id
), step AS (
  INSERT INTO ${t}.job_steps (job_id, seq, name, kind, state, child_id)
  SELECT parent_id, $3, $4, 'invoke', 'waiting', id FROM child
  RETURNING child_id
)${wake}
SELECT child_id::text AS child_id${wake ? `, ${WAKE_OPENED} AS wake` : ''} FROM step`,
    values: [
      parent.jobId,
      parent.token,
      parent.seq,
      parent.name,
      child.queue,
      child.name,
      child.payload,
      child.priority,
      child.maxAttempts,
      child.runAt?.toISOString() ?? null,
      child.delayMs,
      child.traceContext ?? null,
      ...(wakeDebounceMs === undefined ? [] : [wakeDebounceMs]),
    ],
  }
}
