import type { Statement } from '../db/types.js'

/**
 * Where a waiting job stands: `retrying` failed and waits for its next attempt, not due yet (due,
 * it is `waiting`, as the overview counts it ready); `blocked` waits in the blocked table for a
 * slot of its concurrency key.
 */
export const JOB_STATES = ['waiting', 'scheduled', 'running', 'retrying', 'blocked'] as const

export type JobState = (typeof JOB_STATES)[number]

/** A job waiting or running, as `sluice.inspect.jobs()` lists it. */
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
  /**
   * Why it is not running now, e.g. `queue paused`, `retrying at T (attempt 2 of 5)`,
   * `throttled: next token in 2.3 s`, `blocked behind key K (2 of 2 slots taken)`, or
   * `running (lease until T)`; null when it is ready and nothing stops it.
   */
  reason: string | null
}

/** Where a job that has ended is: archived (`completed`, `expired`) or a dead letter (`dead`). */
export const ENDED_STATES = ['completed', 'expired', 'dead'] as const

export type EndedState = (typeof ENDED_STATES)[number]

/**
 * One job with its error history, as the statement returns it: waiting or running (a JobRow's
 * state), or ended and found in the archive or the dead letters.
 */
export interface JobDetailRow extends Omit<JobRow, 'state'> {
  state: JobState | EndedState
  errors: unknown[]
  /** The drain invocation running it now; null unless it is running. */
  runningIn: string | null
  /** When the claim took the running attempt; null unless it is running. */
  startedAt: Date | null
  /** When it completed, expired or was dead-lettered; null while it waits or runs. */
  endedAt: Date | null
  /** How long its last attempt ran, for an archived job; null otherwise. */
  lastDurationMs: number | null
  /** The drain invocation that ran its last attempt, for an archived job; null otherwise. */
  lastInvocation: string | null
  /** The handler's return value, for a completed job that returned one; null otherwise. */
  result: unknown
  /** Its durable steps in call order (docs/steps.md); empty for a job without steps. */
  steps: JobStep[]
}

/** One durable step of a job, as its page shows it. */
export interface JobStep {
  /** Its position, 0 first. */
  seq: number
  /** Its name, with `:n` for the n-th repeat of a name. */
  name: string
  /** `run` (ctx.step), `sleep`, `event` (waitForEvent) or `invoke`. */
  kind: 'run' | 'sleep' | 'event' | 'invoke'
  /** `completed`, `waiting` (an event wait or a child not ended) or `failed` (its last try threw; a child failed). */
  state: 'completed' | 'waiting' | 'failed'
  /** How many runs tried it. */
  attempts: number
  startedAt: string
  finishedAt: string | null
  durationMs: number | null
  /** A sleep's end, or a wait's timeout. */
  wakeAt: string | null
  /** Bytes of its stored result (JSON); null when none. */
  resultBytes: number | null
  error: { name?: string; message?: string; code?: string } | null
  /** What an event wait waits for. */
  topic: string | null
  match: unknown
  /** The job an invoke enqueued. */
  childId: string | null
}

/** A job's steps as one JSON array, in order (JobStep). */
const STEPS = (t: string): string => `(SELECT coalesce(jsonb_agg(jsonb_build_object(
    'seq', s.seq, 'name', s.name, 'kind', s.kind, 'state', s.state, 'attempts', s.attempts,
    'startedAt', s.started_at, 'finishedAt', s.finished_at,
    'durationMs', round(extract(epoch FROM s.finished_at - s.started_at) * 1000),
    'wakeAt', s.wake_at, 'resultBytes', octet_length(s.result::text), 'error', s.error, 'topic', s.topic,
    'match', s.match, 'childId', s.child_id::text) ORDER BY s.seq), '[]')
  FROM ${t}.job_steps s WHERE s.job_id = $1::bigint)`

export interface JobFilter {
  queue: string | null
  name: string | null
  state: JobState | null
  /** Ids above this one (keyset paging, ascending). */
  after: string | null
  /** Enqueued at or after this moment. */
  since: Date | null
  /** Enqueued before this moment. */
  until: Date | null
  limit: number
}

// Running: leased and the lease not run out. Retrying: an attempt failed before and the next one
// is not due yet. Due, it is waiting, as the overview counts it ready: a failed job whose retry is
// due, and one whose lease ran out (claimable again), until a drain takes it.
const STATE = `CASE
    WHEN j.lease_token IS NOT NULL AND j.lease_until > now() THEN 'running'
    WHEN j.run_at > now() AND j.last_error IS NOT NULL THEN 'retrying'
    WHEN j.run_at > now() THEN 'scheduled'
    ELSE 'waiting' END`

// The rows of both tables a waiting job can be in, with `job` (the jobs row, null for a blocked
// one) and `blocked_key` kept for the reason, which is worked out only for the page's rows.
// Filter on the union's columns, never inside a branch: with the filters outside and the
// branches' columns of the same types (no coercion), the union is planned as one append the
// filters are pushed into, and a page in id order is a merge of the primary keys, not a sort of
// every row. `is_blocked` says which table a row is in.
export const jobRows = (t: string): string => `SELECT j.id, j.queue, j.name, ${STATE} AS state, j.payload,
         j.priority, j.attempts, j.max_attempts, j.run_at, j.enqueued_at, j.last_error, j.policy,
         j.partition_key, j.batch_id, j.errors, j AS job, NULL::text AS blocked_key, false AS is_blocked
  FROM ${t}.jobs j
  UNION ALL
  SELECT b.id, b.queue, b.name, 'blocked'::text, b.payload, b.priority, 0, b.max_attempts, b.run_at, b.enqueued_at,
         NULL::jsonb, NULL::text, NULL::text, b.batch_id, '[]'::jsonb, NULL::${t}.jobs, b.concurrency_key, true
  FROM ${t}.blocked b`

/**
 * The filter on a state, given as $n: rows of the table that cannot hold that state are skipped
 * outright (is_blocked is a constant per branch, so the planner drops the other table).
 */
export const stateIs = (n: number): string =>
  `($${n}::text IS NULL OR (r.state = $${n} AND r.is_blocked = ($${n} = 'blocked')))`

const COLUMNS = (t: string): string => `x.id::text AS id, x.queue, x.name, x.state, x.payload, x.priority,
       x.attempts, x.max_attempts AS "maxAttempts", x.run_at AS "runAt", x.enqueued_at AS "enqueuedAt",
       x.last_error AS "lastError", x.policy, x.partition_key AS partition, x.batch_id::text AS "batchId",
       CASE WHEN x.job IS NULL THEN ${t}.blocked_reason(x.blocked_key) ELSE ${t}.job_reason(x.job) END AS reason`

/** A page of jobs (blocked ones too) in id order, filtered by queue, name, state and enqueue time; `after` pages on. */
export function listJobs(t: string, f: JobFilter): Statement {
  return {
    text: `SELECT ${COLUMNS(t)} FROM (
  SELECT * FROM (
    ${jobRows(t)}
  ) r
  WHERE ($1::text IS NULL OR r.queue = $1) AND ($2::text IS NULL OR r.name = $2) AND ${stateIs(3)}
    AND ($4::bigint IS NULL OR r.id > $4::bigint)
    AND ($6::timestamptz IS NULL OR r.enqueued_at >= $6) AND ($7::timestamptz IS NULL OR r.enqueued_at < $7)
  ORDER BY r.id
  LIMIT $5
) x
ORDER BY x.id`,
    values: [f.queue, f.name, f.state, f.after, f.limit, f.since, f.until],
  }
}

/**
 * One job with its error history, wherever it is: the jobs or the blocked table, else the dead
 * letters, else the archive (an id is in one of them at a time, but a retried dead letter leaves
 * its archived row of an earlier life behind, so the order says which wins). Each branch is a
 * primary-key lookup.
 */
export function getJob(t: string, id: string): Statement {
  return {
    text: `SELECT id, queue, name, state, payload, priority, attempts, "maxAttempts", "runAt", "enqueuedAt", "lastError",
       policy, partition, "batchId", reason, errors, "runningIn", "startedAt", "endedAt", "lastDurationMs",
       "lastInvocation", result, ${STEPS(t)} AS steps
FROM (
  SELECT ${COLUMNS(t)}, x.errors,
         CASE WHEN x.state = 'running' THEN (x.job).leased_by END AS "runningIn",
         CASE WHEN x.state = 'running' THEN (x.job).started_at END AS "startedAt",
         NULL::timestamptz AS "endedAt", NULL::float8 AS "lastDurationMs", NULL::text AS "lastInvocation",
         NULL::jsonb AS result, 0 AS rank
  FROM (${jobRows(t)}) x WHERE x.id = $1::bigint
  UNION ALL
  SELECT d.id::text, d.queue, d.name, 'dead', d.payload, d.priority, d.attempts, d.max_attempts, d.failed_at,
         d.enqueued_at, d.last_error, d.policy, d.partition_key, NULL::text, NULL::text, d.errors, NULL::text,
         NULL::timestamptz, d.failed_at, NULL::float8, NULL::text, NULL::jsonb, 1
  FROM ${t}.dead_letters d WHERE d.id = $1::bigint
  UNION ALL
  SELECT a.id::text, a.queue, a.name, a.status, a.payload, a.priority, a.attempts, a.max_attempts, a.finished_at,
         a.enqueued_at, a.errors -> -1, NULL::text, NULL::text, NULL::text, NULL::text, coalesce(a.errors, '[]'),
         NULL::text, NULL::timestamptz, a.finished_at, a.duration_ms::float8, a.invocation, a.result, 2
  FROM ${t}.archived_job($1::bigint) a
) j
ORDER BY rank
LIMIT 1`,
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
 * Deletes a job that waits (in the jobs table and not leased, or blocked) and belongs to no batch
 * (its batch would never finish), with its uniqueness lock and concurrency slot (cancel_waiting).
 * The outcome row tells a missing job from a leased one.
 */
export function cancelJob(t: string, id: string, children: 'cancel' | 'keep' = 'cancel'): Statement {
  return {
    text: `WITH changed AS (SELECT unnest(${t}.cancel_waiting(ARRAY[$1::bigint], $2::text)) AS id)
${outcome(t)}`,
    values: [id, children],
  }
}

/** Where a job's result stands, as `sluice.result(id)` answers. */
export interface JobResultRow {
  /** `completed` (with its result), `expired`, `dead` (with its last error), or `pending` / `running` while it waits or runs. */
  state: 'pending' | 'running' | 'completed' | 'expired' | 'dead'
  /** The handler's return value, for a completed job; null otherwise. */
  result: unknown
  /** The last error, for a dead letter; null otherwise. */
  error: { name?: string; message?: string; code?: string } | null
}

/** A job's result, or where it stands: each branch a primary-key lookup, ranked as getJob ranks them. */
export function getJobResult(t: string, id: string): Statement {
  return {
    text: `SELECT state, result, error FROM (
  SELECT CASE WHEN j.lease_token IS NOT NULL AND j.lease_until > now() THEN 'running' ELSE 'pending' END AS state,
         NULL::jsonb AS result, NULL::jsonb AS error, 0 AS rank
  FROM ${t}.jobs j WHERE j.id = $1::bigint
  UNION ALL
  SELECT 'pending', NULL, NULL, 0 FROM ${t}.blocked b WHERE b.id = $1::bigint
  UNION ALL
  SELECT 'dead', NULL, d.last_error, 1 FROM ${t}.dead_letters d WHERE d.id = $1::bigint
  UNION ALL
  SELECT a.status, a.result, NULL, 2 FROM ${t}.archived_job($1::bigint) a
) x
ORDER BY rank
LIMIT 1`,
    values: [id],
  }
}
