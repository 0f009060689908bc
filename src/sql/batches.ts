import type { Statement } from '../db/types.js'

/** A batch, as `sluice.inspect.batch(id)` returns it. */
export interface BatchRow {
  id: string
  total: number
  completed: number
  discarded: number
  sealed: boolean
  properties: unknown
  createdAt: Date
  finishedAt: Date | null
}

/** What a batch callback stores: the job to enqueue when the batch finishes. */
export interface BatchCallbackRow {
  name: string
  queue: string
  priority: number
  maxAttempts: number
}

export type BatchCallbackRows = Partial<Record<'onFinish' | 'onSuccess' | 'onDiscard', BatchCallbackRow>>

export function createBatch(t: string, callbacks: BatchCallbackRows, properties: unknown): Statement {
  return {
    text: `INSERT INTO ${t}.batches (callbacks, properties) VALUES ($1::jsonb, $2::jsonb) RETURNING id::text AS id`,
    values: [JSON.stringify(callbacks), JSON.stringify(properties ?? {})],
  }
}
export function sealBatch(t: string, id: string): Statement {
  return { text: `SELECT total, finished FROM ${t}.seal_batch($1::bigint)`, values: [id] }
}

export function getBatch(t: string, id: string): Statement {
  return {
    text: `SELECT id::text AS id, total, completed, discarded, sealed, properties, created_at AS "createdAt",
       finished_at AS "finishedAt"
FROM ${t}.batches WHERE id = $1::bigint`,
    values: [id],
  }
}

/** Recent batches, newest first: at most `limit`, with ids below `before` when given (paging). */
export function listBatches(t: string, limit: number, before: string | null): Statement {
  return {
    text: `SELECT id::text AS id, total, completed, discarded, sealed, properties, created_at AS "createdAt",
       finished_at AS "finishedAt"
FROM ${t}.batches WHERE ($2::bigint IS NULL OR id < $2::bigint) ORDER BY id DESC LIMIT $1`,
    values: [limit, before],
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
