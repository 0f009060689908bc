import type { Statement } from '../db/types.js'
import { wakeWindowCtes } from './wake.js'

/** An event ready to publish: validated, its payload serialised. */
export interface NewEvent {
  eventId: string
  topic: string
  /** The payload, already serialised as JSON. */
  payload: string
  headers: Readonly<Record<string, string>>
  delayMs: number
  /** When the event counts as published (subscriptions made later do not receive it); now if absent. */
  publishedAt?: Date
}

/**
 * The events as publish_events decodes them (migrations/functions/events.sql publish_event_records):
 * a JSON array of objects keyed by the outbox's column names. Payloads are already JSON: they
 * are spliced in rather than escaped again.
 */
export function encodeEvents(events: readonly NewEvent[]): string {
  const items = events.map((e) => {
    const meta = JSON.stringify({
      event_id: e.eventId,
      topic: e.topic,
      headers: e.headers,
      published_at: e.publishedAt ?? null,
      delay_ms: e.delayMs,
    })
    return `${meta.slice(0, -1)},"payload":${e.payload}}`
  })
  return `[${items.join(',')}]`
}

/**
 * Publishes events in one call of the publish_events function (migrations/functions/events.sql):
 * the subscriptions are matched in SQL, a delivery record and a job are written per (event,
 * subscriber) not delivered before, whatever the number of subscribers. One row per queue
 * that received jobs.
 */
export function publishEvents(t: string, events: readonly NewEvent[]): Statement {
  return { text: `SELECT queue, jobs FROM ${t}.publish_events($1::jsonb)`, values: [encodeEvents(events)] }
}

/**
 * The publish statement, also saying per queue whether to wake its drains: true for the first
 * publish or enqueue of a debounce window (wakeWindowCtes).
 */
export function publishWithWake(t: string, events: readonly NewEvent[], debounceMs: number): Statement {
  const inner = publishEvents(t, events)
  return {
    text: `WITH pub AS (
  ${inner.text}
), ${wakeWindowCtes(t, 'pub AS source', '$2')}
SELECT pub.queue, pub.jobs,
       (pub.queue IN (SELECT queue FROM seed) OR pub.queue IN (SELECT queue FROM bump)) AS wake
FROM pub`,
    values: [...inner.values, debounceMs],
  }
}
