import type { Statement } from '../db/types.js'

export interface SubscriptionRow {
  name: string
  pattern: string
  regex: string
  queue: string
  priority: number
  maxAttempts: number
  /** The subscriber's admission policy (see subscriberAdmissionRecord), or null. */
  admission: Record<string, unknown> | null
}

/** Writes the subscriptions from code and deletes those no longer there, in one statement. */
export function syncSubscriptions(t: string, subs: readonly SubscriptionRow[]): Statement {
  return {
    text: `WITH defs AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS d(name text, pattern text, regex text, queue text, priority smallint, max_attempts integer, admission jsonb)
), up AS (
  INSERT INTO ${t}.subscriptions AS s (name, pattern, regex, queue, priority, max_attempts, admission)
  SELECT name, pattern, regex, queue, priority, max_attempts, admission FROM defs
  ON CONFLICT (name) DO UPDATE
  SET pattern = excluded.pattern, regex = excluded.regex, queue = excluded.queue, priority = excluded.priority,
      max_attempts = excluded.max_attempts, admission = excluded.admission, updated_at = now()
  WHERE (s.pattern, s.regex, s.queue, s.priority, s.max_attempts, s.admission)
        IS DISTINCT FROM (excluded.pattern, excluded.regex, excluded.queue, excluded.priority, excluded.max_attempts,
                          excluded.admission)
  RETURNING 1
), gone AS (
  DELETE FROM ${t}.subscriptions s WHERE NOT EXISTS (SELECT 1 FROM defs WHERE defs.name = s.name)
  RETURNING 1
)
SELECT ((SELECT count(*) FROM up) + (SELECT count(*) FROM gone))::int AS n`,
    values: [
      JSON.stringify(
        subs.map((s) => ({
          name: s.name,
          pattern: s.pattern,
          regex: s.regex,
          queue: s.queue,
          priority: s.priority,
          max_attempts: s.maxAttempts,
          admission: s.admission,
        })),
      ),
    ],
  }
}

/** Inside ctx.transaction: the processed mark, or no row when the event was processed already. */
export function markProcessed(t: string, eventId: string, subscriber: string): Statement {
  return {
    text: `INSERT INTO ${t}.processed_events (event_id, subscriber) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1 AS marked`,
    values: [eventId, subscriber],
  }
}

/**
 * Deletes processed-event marks and delivery records older than the retention, at most `limit`
 * of each. Past it, a publish of the same event id is a new event.
 */
export function pruneProcessedEvents(t: string, retentionMs: number, limit: number): Statement {
  return {
    text: `WITH marks AS (
  DELETE FROM ${t}.processed_events WHERE (event_id, subscriber) IN (
    SELECT event_id, subscriber FROM ${t}.processed_events
    WHERE processed_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)
  RETURNING 1
), deliveries AS (
  DELETE FROM ${t}.event_deliveries WHERE (event_id, subscriber) IN (
    SELECT event_id, subscriber FROM ${t}.event_deliveries
    WHERE delivered_at < now() - $1::bigint * interval '1 millisecond' LIMIT $2)
  RETURNING 1
)
SELECT ((SELECT count(*) FROM marks) + (SELECT count(*) FROM deliveries))::int AS n`,
    values: [retentionMs, limit],
  }
}
