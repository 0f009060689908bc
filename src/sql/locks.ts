import type { Statement } from '../db/types.js'

/**
 * Semaphores whose TTL passed are recounted from the jobs that really hold them (a lost
 * release cannot leak a slot for good), then refilled from the blocked jobs.
 */
export function reconcileSemaphores(t: string, limit: number): Statement {
  return { text: `SELECT ${t}.reconcile_semaphores($1) AS n`, values: [limit] }
}

/**
 * Uniqueness locks that outlived their purpose: until-executed locks whose job no longer
 * exists; while-executing locks whose owner invocation is gone; any lock past its last-resort TTL.
 */
export function reapLocks(t: string, limit: number): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.unique_locks u WHERE u.key IN (
    SELECT u.key FROM ${t}.unique_locks u
    WHERE u.expires_at < now()
       OR (u.strategy = 'until-executed'
           AND NOT EXISTS (SELECT 1 FROM ${t}.jobs j WHERE j.id = u.job_id)
           AND NOT EXISTS (SELECT 1 FROM ${t}.blocked b WHERE b.id = u.job_id)
           AND u.acquired_at < now() - interval '1 minute')
       OR (u.strategy = 'while-executing'
           AND NOT EXISTS (SELECT 1 FROM ${t}.invocations i WHERE i.id = u.owner))
    LIMIT $1
  )
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`,
    values: [limit],
  }
}

/** Single-consumer leases whose holder stopped renewing them. */
export function reapQueueLeases(t: string): Statement {
  return {
    text: `WITH gone AS (DELETE FROM ${t}.queue_leases WHERE expires_at < now() RETURNING 1)
SELECT count(*)::int AS n FROM gone`,
    values: [],
  }
}

export function pruneStats(t: string, retentionMs: number, limit: number): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.job_stats WHERE ctid IN (
    SELECT ctid FROM ${t}.job_stats WHERE finished_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`,
    values: [retentionMs, limit],
  }
}
