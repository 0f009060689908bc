import type { Statement } from '../db/types.js'

/**
 * Ends a drain invocation that cannot end itself (it failed, or its process is quitting):
 * its lease row and the single-consumer queues it holds are released at once instead of
 * when they run out. Jobs it leased are left to their own leases: they may be running.
 */
export function endInvocation(t: string, invocationId: string): Statement {
  return {
    text: `WITH i AS (DELETE FROM ${t}.invocations WHERE id = $1 RETURNING 1),
q AS (DELETE FROM ${t}.queue_leases WHERE holder = $1 RETURNING 1)
SELECT (SELECT count(*) FROM i)::int AS invocations, (SELECT count(*) FROM q)::int AS queues`,
    values: [invocationId],
  }
}
