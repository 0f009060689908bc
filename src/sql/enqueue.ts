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
 */
export function enqueueMany(t: string, jobs: readonly NewJob[]): Statement {
  // Payloads are already JSON: splice them in as values rather than escaping them again.
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
