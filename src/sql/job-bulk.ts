import type { Statement } from '../db/types.js'
import { type JobState, jobRows, stateIs } from './jobs.js'

/**
 * Which waiting jobs a bulk operation takes: at least one of queue, name, state; at most `limit`,
 * and with `after`, only ids above it (to go on where a previous chunk stopped).
 */
export interface BulkJobFilter {
  queue: string | null
  name: string | null
  state: Exclude<JobState, 'running'> | null
  limit: number
  after: string | null
}

// The waiting jobs matching the filter that the operation may take, in id order: none a drain
// holds (a lapsed lease too: the job is the dead drain's until maintenance or a claim takes it
// back), none in a batch. $1 queue, $2 name, $3 state, $4 limit, $5 the id to start after.
const picked = (t: string, extra: string): string => `SELECT r.id FROM (
    ${jobRows(t)}
  ) r
  WHERE ($1::text IS NULL OR r.queue = $1) AND ($2::text IS NULL OR r.name = $2) AND ${stateIs(3)}
    AND (r.job).lease_token IS NULL AND r.batch_id IS NULL AND ($5::bigint IS NULL OR r.id > $5) ${extra}
  ORDER BY r.id LIMIT $4`

const values = (f: BulkJobFilter): unknown[] => [f.queue, f.name, f.state, f.limit, f.after]

/** Deletes the waiting jobs matching the filter as a cancel does (cancel_waiting); their ids. */
export function cancelJobs(t: string, f: BulkJobFilter): Statement {
  return {
    text: `SELECT unnest(${t}.cancel_waiting(ARRAY(${picked(t, '')})))::text AS id`,
    values: values(f),
  }
}

/** Makes the jobs matching the filter that failed before and wait for a retry due now; their ids. */
export function retryJobs(t: string, f: BulkJobFilter): Statement {
  return {
    text: `UPDATE ${t}.jobs j SET run_at = now()
FROM (${picked(t, 'AND r.attempts > 0')}) p
WHERE j.id = p.id AND j.lease_token IS NULL
RETURNING j.id::text AS id`,
    values: values(f),
  }
}
