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
