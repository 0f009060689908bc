import type { Statement } from '../db/types.js'

export interface ReplayFilter {
  eventId?: string
  subscriber?: string
  /** A topic pattern, matched as publish matches it. */
  topicRegex?: string
  limit: number
}

/**
 * Moves dead-lettered subscriber jobs back to their queue (attempts reset, history kept), for
 * the events matching the filter. Only jobs of current subscriptions are replayed.
 */
export function replayEvents(t: string, f: ReplayFilter): Statement {
  return {
    text: `WITH moved AS (
  DELETE FROM ${t}.dead_letters d
  WHERE d.id IN (
    SELECT d.id FROM ${t}.dead_letters d
    WHERE d.name IN (SELECT name FROM ${t}.subscriptions)
      AND ($1::text IS NULL OR d.payload->>'eventId' = $1)
      AND ($2::text IS NULL OR d.name = $2)
      AND ($3::text IS NULL OR ('.' || (d.payload->>'topic')) ~ $3)
    ORDER BY d.id LIMIT $4 FOR UPDATE SKIP LOCKED)
  RETURNING d.*
)
INSERT INTO ${t}.jobs (id, queue, name, payload, priority, max_attempts, enqueued_at, last_error, errors)
SELECT id, queue, name, payload, priority, max_attempts, enqueued_at, last_error, errors FROM moved
RETURNING id::text AS id`,
    values: [f.eventId ?? null, f.subscriber ?? null, f.topicRegex ?? null, f.limit],
  }
}
