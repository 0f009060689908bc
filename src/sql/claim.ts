import type { Statement } from '../db/types.js'

export interface ClaimParams {
  queues: readonly string[]
  limit: number
  /** How long the claimed jobs stay invisible to other drains. */
  leaseMs: number
  invocationId: string
  invocationPriority: number
  jobsDone: number
}

export interface ClaimedRow {
  id: string
  queue: string
  name: string
  payload: unknown
  priority: number
  attempts: number
  max_attempts: number
  token: string
  enqueued_at: Date
  /** When the job became due: its run_at before this claim. */
  due_at: Date
}

/**
 * Claims up to `limit` due jobs across `queues` in (priority, run_at, id) order, in one
 * statement: each queue is walked on the claim index with FOR UPDATE SKIP LOCKED, the
 * winners get a fresh lease token, one more attempt and an invisibility window, and the
 * drain's invocation lease is registered or renewed on the way. A job with no attempts
 * left whose lease ran out is never claimed again: maintenance dead-letters it.
 */
export function claim(t: string, p: ClaimParams): Statement {
  return {
    text: `WITH invocation AS (
  INSERT INTO ${t}.invocations AS i (id, queues, priority, expires_at, jobs_done)
  VALUES ($4, $1::text[], $5, now() + $3::bigint * interval '1 millisecond', $6)
  ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at, jobs_done = excluded.jobs_done
), picked AS (
  SELECT c.id, c.run_at
  FROM unnest($1::text[]) AS q(queue)
  CROSS JOIN LATERAL (
    SELECT j.id, j.priority, j.run_at
    FROM ${t}.jobs j
    WHERE j.queue = q.queue AND j.run_at <= now() AND j.attempts < j.max_attempts
    ORDER BY j.priority, j.run_at, j.id
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  ) c
  ORDER BY c.priority, c.run_at, c.id
  LIMIT $2
)
UPDATE ${t}.jobs j
SET run_at = now() + $3::bigint * interval '1 millisecond',
    attempts = j.attempts + 1,
    lease_token = gen_random_uuid(),
    leased_by = $4
FROM picked
WHERE j.id = picked.id
RETURNING j.id::text AS id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts,
          j.lease_token::text AS token, j.enqueued_at, picked.run_at AS due_at`,
    values: [p.queues, p.limit, Math.ceil(p.leaseMs), p.invocationId, p.invocationPriority, p.jobsDone],
  }
}
