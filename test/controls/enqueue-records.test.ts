import { afterEach, expect, test } from 'vitest'
import { encodeControlled } from '../../src/sql/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

// Every field enqueue_controlled is sent, through its encoder (src/sql/enqueue.ts) and its
// decoder (migrations/functions/enqueue_controlled.sql enqueue_controlled_records), comes back as it
// went in; so do the fields requeue_dead_letters adds to a replayed dead letter's row.

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const at = new Date('2026-01-02T03:04:05.678Z')
const iso = (v: unknown): unknown => (typeof v === 'string' ? new Date(v).toISOString() : v)

async function decode(encoded: string, extra: object = {}): Promise<Record<string, unknown>[]> {
  const rows = await env!.sql(
    `SELECT to_jsonb(r) || jsonb_build_object('id', r.id::text, 'batch_id', r.batch_id::text,
                                              'payload', r.payload::text) AS r
     FROM $schema.enqueue_controlled_records(
       (SELECT jsonb_agg(e.value || $2::jsonb ORDER BY e.o) FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY e(value, o))
     ) r`,
    [encoded, JSON.stringify(extra)],
  )
  return rows.map((row) => {
    const r = row.r as Record<string, unknown>
    return { ...r, run_at: iso(r.run_at), enqueued_at: iso(r.enqueued_at) }
  })
}

const none = {
  concurrency_key: null,
  concurrency_limit: null,
  concurrency_ttl_ms: null,
  concurrency_on_conflict: null,
  unique_key: null,
  unique_strategy: null,
  unique_on_conflict: null,
  unique_ttl_ms: null,
  batch_id: null,
  id: null,
  errors: null,
  enqueued_at: null,
  policy: null,
  partition_key: null,
  global_max: null,
  rate: null,
  per_ms: null,
  burst: null,
  max_in_flight: null,
  quantum: null,
  adaptive_min: null,
  adaptive_max: null,
  adaptive_initial: null,
  target_lag_ms: null,
  trace_context: null,
}

test('controlled jobs round-trip every field, in order', async () => {
  env = await makeSluice({ jobs: [] })
  const encoded = encodeControlled([
    {
      queue: 'q1',
      name: 'send',
      payload: '{"n":9007199254740993}',
      priority: -5,
      maxAttempts: 7,
      runAt: at,
      delayMs: 0,
      concurrency: { key: 'ck', limit: 3, ttlMs: 3_000_000_000, onConflict: 'discard' },
      unique: { key: 'uk', strategy: 'while-executing', onConflict: 'log', ttlMs: 4_000_000_000 },
      batchId: '9007199254740995',
      id: '9007199254740993',
      admission: {
        policy: 'send',
        partition: 'acct-7',
        globalMax: 40,
        rate: 2.5,
        perMs: 3_000_000_000,
        burst: 5,
        maxInFlight: 3,
        quantum: 2,
        adaptiveMin: 1,
        adaptiveMax: 9,
        adaptiveInitial: 3,
        targetLagMs: 250,
      },
      traceContext:
        '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
    },
    {
      queue: 'q2',
      name: 'n',
      payload: '"s"',
      priority: 0,
      maxAttempts: 1,
      runAt: null,
      delayMs: 2_500_000_000,
    },
  ])
  expect(await decode(encoded)).toEqual([
    {
      queue: 'q1',
      name: 'send',
      payload: '{"n": 9007199254740993}',
      priority: -5,
      max_attempts: 7,
      run_at: at.toISOString(),
      delay_ms: 0,
      concurrency_key: 'ck',
      concurrency_limit: 3,
      concurrency_ttl_ms: 3_000_000_000,
      concurrency_on_conflict: 'discard',
      unique_key: 'uk',
      unique_strategy: 'while-executing',
      unique_on_conflict: 'log',
      unique_ttl_ms: 4_000_000_000,
      batch_id: '9007199254740995',
      id: '9007199254740993',
      errors: null,
      enqueued_at: null,
      policy: 'send',
      partition_key: 'acct-7',
      global_max: 40,
      rate: 2.5,
      per_ms: 3_000_000_000,
      burst: 5,
      max_in_flight: 3,
      quantum: 2,
      adaptive_min: 1,
      adaptive_max: 9,
      adaptive_initial: 3,
      target_lag_ms: 250,
      trace_context:
        '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
      ord: 1,
    },
    {
      ...none,
      queue: 'q2',
      name: 'n',
      payload: '"s"',
      priority: 0,
      max_attempts: 1,
      run_at: null,
      delay_ms: 2_500_000_000,
      ord: 2,
    },
  ])
})

test("a replayed dead letter's row carries its errors and enqueue time", async () => {
  env = await makeSluice({ jobs: [] })
  const encoded = encodeControlled([
    {
      queue: 'q',
      name: 'n',
      payload: '{}',
      priority: 1,
      maxAttempts: 2,
      runAt: null,
      delayMs: 0,
      unique: { key: 'k', strategy: 'until-executed', onConflict: 'reject', ttlMs: 60_000 },
      id: '9007199254740997',
    },
  ])
  const errors = [{ name: 'Error', message: 'boom', at: at.toISOString() }]
  // As requeue_dead_letters (migrations/functions/dead_letters.sql) builds them.
  const rows = await decode(encoded, { errors, enqueued_at: at, unique_on_conflict: 'discard' })
  expect(rows).toEqual([
    {
      ...none,
      queue: 'q',
      name: 'n',
      payload: '{}',
      priority: 1,
      max_attempts: 2,
      run_at: null,
      delay_ms: 0,
      unique_key: 'k',
      unique_strategy: 'until-executed',
      unique_on_conflict: 'discard',
      unique_ttl_ms: 60_000,
      id: '9007199254740997',
      errors,
      enqueued_at: at.toISOString(),
      ord: 1,
    },
  ])
})
