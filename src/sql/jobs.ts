import type { Statement } from '../db/types.js'

/** Where a job in the jobs table stands: `retrying` failed and waits for its next attempt. */
export const JOB_STATES = ['waiting', 'scheduled', 'running', 'retrying'] as const

export type JobState = (typeof JOB_STATES)[number]

/** A job in the jobs table, as `sluice.inspect.jobs()` lists it. */
export interface JobRow {
  id: string
  queue: string
  name: string
  state: JobState
  payload: unknown
  priority: number
  attempts: number
  maxAttempts: number
  runAt: Date
  enqueuedAt: Date
  lastError: { name?: string; message?: string; attempt?: number; at?: string } | null
  policy: string | null
  partition: string | null
  batchId: string | null
}

/** One job with its error history, as `sluice.inspect.job()` returns it. */
export interface JobDetailRow extends JobRow {
  errors: unknown[]
}

export interface JobFilter {
  queue: string | null
  name: string | null
  state: JobState | null
  /** Ids above this one (keyset paging, ascending). */
  after: string | null
  limit: number
}

// Running: leased and the lease not run out. A lease that ran out is claimable again, so the
// job counts as waiting (or retrying) until a drain takes it.
const STATE = `CASE
    WHEN j.lease_token IS NOT NULL AND j.run_at > now() THEN 'running'
    WHEN j.attempts > 0 THEN 'retrying'
    WHEN j.run_at > now() THEN 'scheduled'
    ELSE 'waiting' END`

const COLUMNS = `j.id::text AS id, j.queue, j.name, ${STATE} AS state, j.payload, j.priority, j.attempts,
       j.max_attempts AS "maxAttempts", j.run_at AS "runAt", j.enqueued_at AS "enqueuedAt",
       j.last_error AS "lastError", j.policy, j.partition_key AS partition, j.batch_id::text AS "batchId"`

/** A page of jobs in id order, filtered by queue, name and state; `after` pages on. */
export function listJobs(t: string, f: JobFilter): Statement {
  return {
    text: `SELECT * FROM (
  SELECT ${COLUMNS}
  FROM ${t}.jobs j
  WHERE ($1::text IS NULL OR j.queue = $1) AND ($2::text IS NULL OR j.name = $2)
    AND ($4::bigint IS NULL OR j.id > $4::bigint)
) x
WHERE $3::text IS NULL OR x.state = $3
ORDER BY x.id::bigint
LIMIT $5`,
    values: [f.queue, f.name, f.state, f.after, f.limit],
  }
}

export function getJob(t: string, id: string): Statement {
  return {
    text: `SELECT ${COLUMNS}, j.errors FROM ${t}.jobs j WHERE j.id = $1::bigint`,
    values: [id],
  }
}

/** What a job operation found: `done` when it applied, else whether the job exists and is leased. */
export interface JobOpRow {
  done: boolean
  found: boolean
  leased: boolean
  attempts: number | null
  batchId: string | null
}

const outcome = (t: string): string => `SELECT EXISTS (SELECT 1 FROM changed) AS done,
       j.id IS NOT NULL AS found, coalesce(j.lease_token IS NOT NULL, false) AS leased,
       j.attempts, j.batch_id::text AS "batchId"
FROM (SELECT 1) one LEFT JOIN ${t}.jobs j ON j.id = $1::bigint`

/**
 * Makes a job that is not leased due now (`failedOnly`: only one that failed before, a retry).
 * The outcome row tells a missing job from a leased one.
 */
export function makeJobDue(t: string, id: string, failedOnly: boolean): Statement {
  return {
    text: `WITH changed AS (
  UPDATE ${t}.jobs SET run_at = now()
  WHERE id = $1::bigint AND lease_token IS NULL AND (NOT $2::boolean OR attempts > 0)
  RETURNING id
)
${outcome(t)}`,
    values: [id, failedOnly],
  }
}

/**
 * Deletes a job that is not leased and belongs to no batch (its batch would never finish),
 * with its uniqueness lock. Admission counts and concurrency slots read the jobs table or are
 * held by running jobs only, so nothing else refers to it.
 */
export function cancelJob(t: string, id: string): Statement {
  return {
    text: `WITH changed AS (
  DELETE FROM ${t}.jobs WHERE id = $1::bigint AND lease_token IS NULL AND batch_id IS NULL
  RETURNING id
), unlocked AS (
  DELETE FROM ${t}.unique_locks u USING changed c WHERE u.job_id = c.id
)
${outcome(t)}`,
    values: [id],
  }
}
