import type { Statement } from '../db/types.js'

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
}

/** Whether a job needs the controlled path (locks, slots, batch counters). */
export const isControlled = (job: NewJob): boolean =>
  job.concurrency !== undefined || job.unique !== undefined || job.batchId !== undefined

export interface ControlledRow {
  ord: string
  id: string | null
  status: 'enqueued' | 'blocked' | 'duplicate' | 'discarded'
  existing_id: string | null
}

const COLUMNS = 'queue, name, payload, priority, max_attempts, run_at'

/** One job, one INSERT. The database's clock applies the delay, so client clock skew cannot. */
export function enqueueOne(t: string, job: NewJob): Statement {
  return {
    text: `INSERT INTO ${t}.jobs (${COLUMNS})
VALUES ($1, $2, $3::jsonb, $4, $5, coalesce($6::timestamptz, now() + $7::bigint * interval '1 millisecond'))
RETURNING id::text AS id`,
    values: [
      job.queue,
      job.name,
      job.payload,
      job.priority,
      job.maxAttempts,
      job.runAt?.toISOString() ?? null,
      job.delayMs,
    ],
  }
}

/**
 * Many jobs, one INSERT: the rows travel as a single JSON array parameter, which every
 * driver binds the same way and which has no bind-parameter limit. Ids come back in input order.
 * When every job shares its queue, name, priority, attempts and timing (the usual batch of one
 * kind of job), those go once as plain parameters and the array holds the payloads alone.
 */
export function enqueueMany(t: string, jobs: readonly NewJob[]): Statement {
  const first = jobs[0]
  if (first && jobs.every((job) => sameShape(job, first))) {
    return {
      text: `INSERT INTO ${t}.jobs (${COLUMNS})
SELECT $2, $3, p.value, $4, $5, coalesce($6::timestamptz, now() + $7::bigint * interval '1 millisecond')
FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS p(value, o)
ORDER BY p.o
RETURNING id::text AS id`,
      // Payloads are already JSON: splice them in as values rather than escaping them again.
      values: [
        `[${jobs.map((job) => job.payload).join(',')}]`,
        first.queue,
        first.name,
        first.priority,
        first.maxAttempts,
        first.runAt?.toISOString() ?? null,
        first.delayMs,
      ],
    }
  }
  const rows = jobs.map((job) => {
    const meta = JSON.stringify([
      job.queue,
      job.name,
      job.priority,
      job.maxAttempts,
      job.runAt?.toISOString() ?? null,
      job.delayMs,
    ])
    return `{"m":${meta},"p":${job.payload}}`
  })
  return {
    text: `INSERT INTO ${t}.jobs (${COLUMNS})
SELECT r.m->>0, r.m->>1, r.p, (r.m->>2)::smallint, (r.m->>3)::integer,
       coalesce((r.m->>4)::timestamptz, now() + (r.m->>5)::bigint * interval '1 millisecond')
FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (m jsonb, p jsonb)) WITH ORDINALITY AS r(m, p, o)
ORDER BY r.o
RETURNING id::text AS id`,
    values: [`[${rows.join(',')}]`],
  }
}

const sameShape = (a: NewJob, b: NewJob): boolean =>
  a.queue === b.queue &&
  a.name === b.name &&
  a.priority === b.priority &&
  a.maxAttempts === b.maxAttempts &&
  a.delayMs === b.delayMs &&
  (a.runAt?.getTime() ?? null) === (b.runAt?.getTime() ?? null)

/** One job as a row of the enqueue_controlled function's JSON input. */
export function controlledRow(job: NewJob): string {
  const c = job.concurrency
  const u = job.unique
  const meta = JSON.stringify({
    q: job.queue,
    n: job.name,
    pr: job.priority,
    m: job.maxAttempts,
    r: job.runAt?.toISOString() ?? null,
    d: job.delayMs,
    ck: c?.key ?? null,
    cl: c?.limit ?? null,
    ct: c?.ttlMs ?? null,
    cc: c?.onConflict ?? null,
    uk: u?.key ?? null,
    us: u?.strategy ?? null,
    uc: u?.onConflict ?? null,
    ut: u?.ttlMs ?? null,
    b: job.batchId ?? null,
    i: job.id ?? null,
  })
  // The payload is already JSON: splice it in rather than escaping it again.
  return `${meta.slice(0, -1)},"p":${job.payload}}`
}

/**
 * Jobs with controls, in one call of the enqueue_controlled function: until-executed locks,
 * concurrency slots (or blocking), batch counts, all atomic with the insert.
 */
export function enqueueControlled(t: string, jobs: readonly NewJob[]): Statement {
  return {
    text: `SELECT ord::text AS ord, id, status, existing_id FROM ${t}.enqueue_controlled($1::jsonb) ORDER BY ord`,
    values: [`[${jobs.map(controlledRow).join(',')}]`],
  }
}
