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
 * the events matching the filter, under their subscription's admission policy (its partition
 * made again if maintenance pruned it) and with their trace context. Only jobs of current
 * subscriptions are replayed.
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
), placed AS (
  -- Under the subscription's policy as it is now, in the partition publish would place the event
  -- in, with the trace it was published with.
  SELECT m.*, s.admission AS adm,
         ${t}.event_partition(s.admission, m.payload->'payload', coalesce(m.payload->'headers', '{}')) AS part
  FROM moved m JOIN ${t}.subscriptions s ON s.name = m.name
), admitted AS (
  -- The partitions' rows, as publish makes them (maintenance prunes idle ones).
  SELECT ${t}.admission_enqueued(jsonb_agg(p.adm || jsonb_build_object(
           'queue', p.queue, 'policy', p.name, 'partition_key', p.part))) AS n
  FROM placed p
  WHERE p.adm IS NOT NULL
  HAVING count(*) > 0
)
INSERT INTO ${t}.jobs (id, queue, name, payload, priority, max_attempts, enqueued_at, last_error, errors, policy,
                      partition_key, trace_context)
SELECT p.id, p.queue, p.name, p.payload, p.priority, p.max_attempts, p.enqueued_at, p.last_error, p.errors,
       CASE WHEN p.adm IS NOT NULL THEN p.name END, p.part,
       ${t}.event_trace_context(coalesce(p.payload->'headers', '{}'))
FROM placed p
-- Reading it makes the partitions' rows exist before the jobs are written.
LEFT JOIN admitted ON true
RETURNING id::text AS id`,
    values: [f.eventId ?? null, f.subscriber ?? null, f.topicRegex ?? null, f.limit],
  }
}
