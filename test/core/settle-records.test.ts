import { afterEach, expect, test } from 'vitest'
import {
  encodeCompletions,
  encodeFailures,
  encodeHandBacks,
  SETTLE_COLUMNS,
  SETTLE_RECORD_TYPES,
} from '../../src/sql/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

// Every field a settle is sent, through its encoder (src/sql/settle.ts: one array per column) and
// its decoder (migrations/functions/settle_records.sql), comes back as it went in: big ids, nulls,
// strings an array literal must quote, empty lists.

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const token = '6f1c8a52-0a47-4a53-9d59-0b7c1f0e6a11'
const at = new Date('2026-01-02T03:04:05.678Z')

/** The decoders' parameter types, in order, as the settle statement casts them. */
const TYPES: Record<string, readonly string[]> = SETTLE_RECORD_TYPES

/** The decoder's rows as JSON, ids as text (a bigint past 2^53 stays exact). */
async function decode(fn: string, encoded: unknown[][]): Promise<Record<string, unknown>[]> {
  const types = TYPES[fn]!
  expect(encoded).toHaveLength(types.length)
  const params = types.map((type, i) => `$${i + 1}::${type}`).join(', ')
  const rows = await env!.sql(
    `SELECT to_jsonb(r) || jsonb_build_object('id', r.id::text) AS r FROM $schema.${fn}(${params}) r`,
    encoded,
  )
  return rows.map((row) => row.r as Record<string, unknown>)
}

const iso = (v: unknown): unknown => (typeof v === 'string' ? new Date(v).toISOString() : v)

test('completions round-trip every field', async () => {
  env = await makeSluice({ jobs: [] })
  const encoded = encodeCompletions([
    {
      id: '9007199254740993',
      token,
      status: 'completed',
      durationMs: 3_000_000_000,
      waitMs: 2_500_000_000,
      lagMs: 2_600_000_000,
      result: '{"sum":41,"text":"quote \\" and comma , and brace }"}',
    },
    { id: '2', token, status: 'expired', durationMs: null, waitMs: 0 },
  ])
  expect(await decode('settle_completions', encoded)).toEqual([
    {
      id: '9007199254740993',
      token,
      status: 'completed',
      duration_ms: 3_000_000_000,
      wait_ms: 2_500_000_000,
      lag_ms: 2_600_000_000,
      result: { sum: 41, text: 'quote " and comma , and brace }' },
    },
    { id: '2', token, status: 'expired', duration_ms: null, wait_ms: 0, lag_ms: null, result: null },
  ])
})

test('failures round-trip every field; the error is stamped with the time it was recorded', async () => {
  env = await makeSluice({ jobs: [] })
  const encoded = encodeFailures([
    {
      id: '3',
      token,
      error: { name: 'TypeError', message: 'boom' },
      delayMs: 1234.4,
      final: true,
      durationMs: 5,
      waitMs: 6,
      lagMs: 7,
      slowDownMs: 3_000_000_000,
      keepPlace: at,
    },
    {
      id: '4',
      token,
      error: {
        name: 'SluiceError',
        message: 'a "quoted", {braced} \\ back-slashed\nNULL message',
        code: 'JOB_TIMEOUT',
      },
      delayMs: 0,
      final: false,
      durationMs: null,
      waitMs: 0,
    },
    {
      id: '6',
      token,
      error: { name: 'NULL', message: '' },
      delayMs: 1,
      final: false,
      durationMs: 1,
      waitMs: 1,
    },
  ])
  const rows = (await decode('settle_failures', encoded)).map(({ error, keep_place, ...rest }) => {
    const { at: recorded, ...sent } = error as { at?: unknown }
    expect(typeof recorded).toBe('string')
    return { ...rest, error: sent, keep_place: iso(keep_place) }
  })
  expect(rows).toEqual([
    {
      id: '3',
      token,
      error: { name: 'TypeError', message: 'boom' },
      delay_ms: 1234,
      final: true,
      keep_place: at.toISOString(),
      duration_ms: 5,
      wait_ms: 6,
      lag_ms: 7,
      slow_down_ms: 3_000_000_000,
    },
    {
      id: '4',
      token,
      error: {
        name: 'SluiceError',
        message: 'a "quoted", {braced} \\ back-slashed\nNULL message',
        code: 'JOB_TIMEOUT',
      },
      delay_ms: 0,
      final: false,
      keep_place: null,
      duration_ms: null,
      wait_ms: 0,
      lag_ms: null,
      slow_down_ms: null,
    },
    {
      id: '6',
      token,
      error: { name: 'NULL', message: '' },
      delay_ms: 1,
      final: false,
      keep_place: null,
      duration_ms: 1,
      wait_ms: 1,
      lag_ms: null,
      slow_down_ms: null,
    },
  ])
})

test('empty lists decode to no rows', async () => {
  env = await makeSluice({ jobs: [] })
  expect(await decode('settle_completions', encodeCompletions([]))).toEqual([])
  expect(await decode('settle_failures', encodeFailures([]))).toEqual([])
  expect(await decode('settle_hand_backs', encodeHandBacks([]))).toEqual([])
})

test('hand-backs round-trip every field', async () => {
  env = await makeSluice({ jobs: [] })
  const rows = await decode('settle_hand_backs', encodeHandBacks([{ id: '5', token, dueAt: at }]))
  expect(rows.map((r) => ({ ...r, due_at: iso(r.due_at) }))).toEqual([
    { id: '5', token, due_at: at.toISOString() },
  ])
})

// The records settle (and dead-letter discards) build in SQL and pass to after_end: ended_job's
// encoder (migrations/functions/common.sql) and ended_job_records, its decoder.
test('ended jobs round-trip every field; a job with nothing to release has no record', async () => {
  env = await makeSluice({ jobs: [] })
  const rows = await env.sql(
    `WITH ended AS (
       SELECT jsonb_agg(e ORDER BY n) FILTER (WHERE e IS NOT NULL) AS a
       FROM (VALUES
         (1, $schema.ended_job(9007199254740993, 'ck', 'uk', NULL, 9007199254740995, true)),
         (2, $schema.ended_job(7, NULL, NULL, 'xk', NULL, false)),
         (3, $schema.ended_job(8, NULL, NULL, NULL, 9, false)),
         (4, $schema.ended_job(10, NULL, NULL, NULL, NULL, true))
       ) v(n, e)
     )
     SELECT to_jsonb(r) || jsonb_build_object('job_id', r.job_id::text, 'batch_id', r.batch_id::text) AS r
     FROM ended, $schema.ended_job_records(ended.a) r`,
  )
  expect(rows.map((row) => row.r)).toEqual([
    {
      job_id: '9007199254740993',
      concurrency_key: 'ck',
      lock_key: 'uk',
      batch_id: '9007199254740995',
      succeeded: true,
    },
    { job_id: '7', concurrency_key: null, lock_key: 'xk', batch_id: null, succeeded: false },
    { job_id: '8', concurrency_key: null, lock_key: null, batch_id: '9', succeeded: false },
  ])
})

test("outcomes round-trip every field (settle_outcome's encoder, settle_outcomes' decoder)", async () => {
  env = await makeSluice({ jobs: [] })
  const rows = await env.sql(
    `SELECT to_jsonb(r) AS r FROM $schema.settle_outcomes(
       jsonb_build_array($schema.settle_outcome('q1', true), $schema.settle_outcome('q2', false))) r`,
  )
  expect(rows.map((row) => row.r)).toEqual([
    { queue: 'q1', succeeded: true },
    { queue: 'q2', succeeded: false },
  ])
})

test("the settle function's parameters and the decoders' are the client's columns, in its order", async () => {
  env = await makeSluice({ jobs: [] })
  /** A function's parameters as (name, type), from the catalog. */
  const signature = async (fn: string) => {
    const [row] = await env!.sql<{ names: string[]; types: string[] }>(
      `SELECT p.proargnames AS names, ARRAY(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) t) AS types
       FROM pg_proc p WHERE p.pronamespace = $1::regnamespace AND p.proname = $2`,
      [`"${env!.schema}"`, fn],
    )
    return row!.names.slice(0, row!.types.length).map((name, i) => [name, row!.types[i]])
  }
  const lists = Object.values(SETTLE_COLUMNS).flat()
  const types = (type: string) => type.replace('timestamptz', 'timestamp with time zone')
  expect(await signature('settle')).toEqual([
    ...lists.map((c) => [c.param, types(c.type)]),
    ['p_invocation', 'text'],
    ['p_finish', 'boolean'],
    ['p_queues', 'text[]'],
  ])
  for (const [decoder, columns] of Object.entries(SETTLE_COLUMNS)) {
    const found = (await signature(decoder)).map(([, type]) => type)
    expect(found, decoder).toEqual(columns.map((c) => types(c.type)))
  }
})
