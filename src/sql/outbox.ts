import type { Statement } from '../db/types.js'

/** Publishes up to `limit` pending outbox entries, exactly once each (relay_outbox). */
export function relayOutbox(t: string, limit: number): Statement {
  return { text: `SELECT entries, jobs FROM ${t}.relay_outbox($1)`, values: [limit] }
}

/** Deletes outbox entries published longer ago than the retention, at most `limit`. */
export function pruneOutbox(t: string, retentionMs: number, limit: number): Statement {
  return {
    text: `WITH gone AS (
  DELETE FROM ${t}.outbox WHERE id IN (
    SELECT id FROM ${t}.outbox
    WHERE published_at IS NOT NULL AND published_at < now() - $1::bigint * interval '1 millisecond'
    LIMIT $2)
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`,
    values: [retentionMs, limit],
  }
}
