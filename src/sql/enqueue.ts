import type { Statement } from '../db/types.js'

/** What one job stores for its policy: its partition and the gates' settings (see admission_enqueued). */
export interface AdmissionRow {
  policy: string
  partition: string
  globalMax: number | null
  rate: number | null
  perMs: number | null
  burst: number | null
  maxInFlight: number | null
  quantum: number | null
  adaptiveMin: number | null
  adaptiveMax: number | null
  adaptiveInitial: number | null
  targetLagMs: number | null
}

export interface NewJob {
  queue: string
  name: string
  /** The payload, already serialised as JSON. */
  payload: string
  priority: number
  maxAttempts: number
  /** Absolute due time; when null, `delayMs` after the database's now(). */
  runAt: Date | null
  delayMs: number
  concurrency?: { key: string; limit: number; ttlMs: number; onConflict: 'block' | 'discard' | 'raise' }
  unique?: {
    key: string
    strategy: 'until-executed' | 'while-executing'
    onConflict: 'reject' | 'discard' | 'log'
    ttlMs: number
  }
  batchId?: string
  /** Set when a dead letter is replayed: it keeps its id. */
  id?: string
  /** The job's admission policy: its partition and the gates' settings. */
  admission?: AdmissionRow
  /**
   * The W3C trace context of the traced enqueue that writes the job (`traceparent`, and a space
   * and `tracestate` when there is one): its runs' spans continue that trace. Absent when untraced.
   */
  traceContext?: string
}

/** Whether a job is due as soon as it is written (`now`: epoch ms): a drain could take it at once. */
export const isDue = (job: NewJob, now: number): boolean =>
  job.runAt ? job.runAt.getTime() <= now : job.delayMs === 0

/** Whether a job needs the controlled path (locks, slots, batch counters). */
export const isControlled = (job: NewJob): boolean =>
  job.concurrency !== undefined ||
  job.unique !== undefined ||
  job.batchId !== undefined ||
  job.admission !== undefined

export interface ControlledRow {
  ord: string
  id: string | null
  status: 'enqueued' | 'blocked' | 'duplicate' | 'discarded'
  existing_id: string | null
}

const COLUMNS = 'queue, name, payload, priority, max_attempts, run_at, trace_context'

/** One job, one INSERT. The database's clock applies the delay, so client clock skew cannot. */
export function enqueueOne(t: string, job: NewJob): Statement {
  return {
    text: `INSERT INTO ${t}.jobs (${COLUMNS})
VALUES ($1, $2, $3::jsonb, $4, $5, coalesce($6::timestamptz, now() + $7::bigint * interval '1 millisecond'), $8::text)
RETURNING id::text AS id`,
    values: [
      job.queue,
      job.name,
      job.payload,
      job.priority,
      job.maxAttempts,
      job.runAt?.toISOString() ?? null,
      job.delayMs,
      job.traceContext ?? null,
    ],
  }
}

/**
 * Many jobs of one kind, one INSERT: what they share (queue, name, priority, attempts, timing,
 * trace context) goes once as plain parameters, the payloads as a single JSON array parameter, which every
 * driver binds the same way and which has no bind-parameter limit. Ids come back in input order.
 */
export function enqueueMany(
  t: string,
  shared: Omit<NewJob, 'payload'>,
  payloads: readonly string[],
): Statement {
  return {
    text: `INSERT INTO ${t}.jobs (${COLUMNS})
SELECT $2, $3, p.value, $4, $5, coalesce($6::timestamptz, now() + $7::bigint * interval '1 millisecond'), $8::text
FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS p(value, o)
ORDER BY p.o
RETURNING id::text AS id`,
    // Payloads are already JSON: splice them in as values rather than escaping them again.
    values: [
      `[${payloads.join(',')}]`,
      shared.queue,
      shared.name,
      shared.priority,
      shared.maxAttempts,
      shared.runAt?.toISOString() ?? null,
      shared.delayMs,
      shared.traceContext ?? null,
    ],
  }
}

/**
 * One job as a row of the enqueue_controlled function's JSON input, keyed by the names of the
 * columns it fills (decoded by enqueue_controlled_records in migrations/functions/enqueue_controlled.sql).
 */
export function controlledRow(job: NewJob): string {
  const c = job.concurrency
  const u = job.unique
  const a = job.admission
  const meta = JSON.stringify({
    queue: job.queue,
    name: job.name,
    priority: job.priority,
    max_attempts: job.maxAttempts,
    run_at: job.runAt?.toISOString() ?? null,
    delay_ms: job.delayMs,
    concurrency_key: c?.key ?? null,
    concurrency_limit: c?.limit ?? null,
    concurrency_ttl_ms: c?.ttlMs ?? null,
    concurrency_on_conflict: c?.onConflict ?? null,
    unique_key: u?.key ?? null,
    unique_strategy: u?.strategy ?? null,
    unique_on_conflict: u?.onConflict ?? null,
    unique_ttl_ms: u?.ttlMs ?? null,
    batch_id: job.batchId ?? null,
    id: job.id ?? null,
    policy: a?.policy ?? null,
    partition_key: a?.partition ?? null,
    global_max: a?.globalMax ?? null,
    rate: a?.rate ?? null,
    per_ms: a?.perMs ?? null,
    burst: a?.burst ?? null,
    max_in_flight: a?.maxInFlight ?? null,
    quantum: a?.quantum ?? null,
    adaptive_min: a?.adaptiveMin ?? null,
    adaptive_max: a?.adaptiveMax ?? null,
    adaptive_initial: a?.adaptiveInitial ?? null,
    target_lag_ms: a?.targetLagMs ?? null,
  })
  // Only a traced enqueue sends a trace context: absent, the decoder reads null.
  const trace = job.traceContext === undefined ? '' : `,"trace_context":${JSON.stringify(job.traceContext)}`
  // The payload is already JSON: splice it in rather than escaping it again.
  return `${meta.slice(0, -1)}${trace},"payload":${job.payload}}`
}

/** The jobs enqueue_controlled (and requeue_dead_letters, which calls it) is sent. */
export function encodeControlled(jobs: readonly NewJob[]): string {
  return `[${jobs.map(controlledRow).join(',')}]`
}

/**
 * Jobs with controls, in one call of the enqueue_controlled function: until-executed locks,
 * concurrency slots (or blocking), batch counts, all atomic with the insert.
 */
export function enqueueControlled(t: string, jobs: readonly NewJob[]): Statement {
  return {
    text: `SELECT ord::text AS ord, id, status, existing_id FROM ${t}.enqueue_controlled($1::jsonb) ORDER BY ord`,
    values: [encodeControlled(jobs)],
  }
}
