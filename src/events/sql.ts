import type { Statement } from '../db/types.js'

/** An event ready to publish: validated, its payload serialised. */
export interface NewEvent {
  eventId: string
  topic: string
  /** The payload, already serialised as JSON. */
  payload: string
  headers: Readonly<Record<string, string>>
  delayMs: number
}

export interface SubscriptionRow {
  name: string
  pattern: string
  regex: string
  queue: string
  priority: number
  maxAttempts: number
}

/**
 * Publishes events in one call of the publish_events function (migrations/0008_events.sql):
 * the subscriptions are matched in SQL, a delivery record and a job are written per (event,
 * subscriber) not delivered before, whatever the number of subscribers. One row per queue
 * that received jobs.
 */
export function publishEvents(t: string, events: readonly NewEvent[]): Statement {
  // Payloads are already JSON: splice them in rather than escaping them again.
  const items = events.map((e) => {
    const meta = JSON.stringify({ i: e.eventId, t: e.topic, h: e.headers, d: e.delayMs })
    return `${meta.slice(0, -1)},"p":${e.payload}}`
  })
  return {
    text: `SELECT queue, jobs FROM ${t}.publish_events($1::jsonb)`,
    values: [`[${items.join(',')}]`],
  }
}

/**
 * The publish statement, also saying per queue whether to wake its drains: true for the first
 * publish or enqueue of a debounce window (as withWake does for enqueue).
 */
export function publishWithWake(t: string, events: readonly NewEvent[], debounceMs: number): Statement {
  const inner = publishEvents(t, events)
  return {
    text: `WITH pub AS (
  ${inner.text}
), seed AS (
  INSERT INTO ${t}.wakeups (queue, last_at) SELECT queue, now() FROM pub ON CONFLICT (queue) DO NOTHING RETURNING queue
), bump AS (
  UPDATE ${t}.wakeups w SET last_at = now()
  FROM pub WHERE w.queue = pub.queue AND w.last_at < now() - $2::bigint * interval '1 millisecond'
  RETURNING w.queue
)
SELECT pub.queue, pub.jobs,
       (pub.queue IN (SELECT queue FROM seed) OR pub.queue IN (SELECT queue FROM bump)) AS wake
FROM pub`,
    values: [...inner.values, debounceMs],
  }
}

/** Writes the subscriptions from code and deletes those no longer there, in one statement. */
export function syncSubscriptions(t: string, subs: readonly SubscriptionRow[]): Statement {
  return {
    text: `WITH defs AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb)
    AS d(name text, pattern text, regex text, queue text, priority smallint, max_attempts integer)
), up AS (
  INSERT INTO ${t}.subscriptions AS s (name, pattern, regex, queue, priority, max_attempts)
  SELECT name, pattern, regex, queue, priority, max_attempts FROM defs
  ON CONFLICT (name) DO UPDATE
  SET pattern = excluded.pattern, regex = excluded.regex, queue = excluded.queue, priority = excluded.priority,
      max_attempts = excluded.max_attempts, updated_at = now()
  WHERE (s.pattern, s.regex, s.queue, s.priority, s.max_attempts)
        IS DISTINCT FROM (excluded.pattern, excluded.regex, excluded.queue, excluded.priority, excluded.max_attempts)
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
        })),
      ),
    ],
  }
}

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

/** Inside ctx.transaction: the processed mark, or no row when the event was processed already. */
export function markProcessed(t: string, eventId: string, subscriber: string): Statement {
  return {
    text: `INSERT INTO ${t}.processed_events (event_id, subscriber) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1 AS marked`,
    values: [eventId, subscriber],
  }
}

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
