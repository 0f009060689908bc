import type { Statement } from '../db/types.js'
import type { AnyJob } from '../jobs/define.js'

export interface BatchCallbacks {
  /** Enqueued once when every job of the batch has completed or been dead-lettered. */
  onFinish?: AnyJob
  /** Enqueued once, at the finish, when no job was dead-lettered. */
  onSuccess?: AnyJob
  /** Enqueued once, at the finish, when at least one job was dead-lettered. */
  onDiscard?: AnyJob
}

export interface BatchRow {
  id: string
  total: number
  completed: number
  discarded: number
  sealed: boolean
  properties: unknown
  created_at: Date
  finished_at: Date | null
}

const callback = (job: AnyJob) => ({
  name: job.name,
  queue: job.queue,
  priority: job.priority,
  maxAttempts: job.retry.maxAttempts,
})

export function createBatch(t: string, callbacks: BatchCallbacks, properties: unknown): Statement {
  const spec: Record<string, ReturnType<typeof callback>> = {}
  for (const key of ['onFinish', 'onSuccess', 'onDiscard'] as const) {
    const job = callbacks[key]
    if (job) spec[key] = callback(job)
  }
  return {
    text: `INSERT INTO ${t}.batches (callbacks, properties) VALUES ($1::jsonb, $2::jsonb) RETURNING id::text AS id`,
    values: [JSON.stringify(spec), JSON.stringify(properties ?? {})],
  }
}

export function sealBatch(t: string, id: string): Statement {
  return { text: `SELECT total, finished FROM ${t}.seal_batch($1::bigint)`, values: [id] }
}

export function getBatch(t: string, id: string): Statement {
  return {
    text: `SELECT id::text AS id, total, completed, discarded, sealed, properties, created_at, finished_at
FROM ${t}.batches WHERE id = $1::bigint`,
    values: [id],
  }
}

/** Deletes batches that finished before the retention, at most `limit` per call. */
export function pruneBatches(t: string, retentionMs: number, limit: number): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.batches WHERE id IN (
    SELECT id FROM ${t}.batches WHERE finished_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`,
    values: [retentionMs, limit],
  }
}
