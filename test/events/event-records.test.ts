import { afterEach, expect, test } from 'vitest'
import { encodeEvents } from '../../src/sql/publish.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

// Every field publish_events is sent, through its encoder (src/sql/publish.ts) and its decoder
// (migrations/functions/events.sql publish_event_records), comes back as it went in.

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const at = new Date('2026-01-02T03:04:05.678Z')
const iso = (v: unknown): unknown => (typeof v === 'string' ? new Date(v).toISOString() : v)

test('events round-trip every field, in order', async () => {
  env = await makeSluice({ jobs: [] })
  const encoded = encodeEvents([
    {
      eventId: 'evt-9007199254740993',
      topic: 'orders.created',
      payload: '{"n":9007199254740993,"s":"x"}',
      headers: { trace: 'abc' },
      delayMs: 3_000_000_000,
      publishedAt: at,
    },
    { eventId: 'e2', topic: 't', payload: 'null', headers: {}, delayMs: 0 },
  ])
  const rows = await env.sql(
    `SELECT to_jsonb(r) - 'payload' || jsonb_build_object('payload', r.payload::text) AS r
     FROM $schema.publish_event_records($1::jsonb) r`,
    [encoded],
  )
  const decoded = rows.map((row) => row.r as Record<string, unknown>)
  // A JSON null payload arrives as SQL null (the job's envelope says payload: null either way).
  expect(decoded.map((r) => ({ ...r, published_at: iso(r.published_at) }))).toEqual([
    {
      event_id: 'evt-9007199254740993',
      topic: 'orders.created',
      payload: '{"n": 9007199254740993, "s": "x"}',
      headers: { trace: 'abc' },
      published_at: at.toISOString(),
      delay_ms: 3_000_000_000,
      ord: 1,
    },
    { event_id: 'e2', topic: 't', payload: null, headers: {}, published_at: null, delay_ms: 0, ord: 2 },
  ])
})
