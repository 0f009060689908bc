import { afterEach, expect, test } from 'vitest'
import { encodeCompletions, encodeFailures, encodeHandBacks } from '../../src/sql/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

// Every field a settle is sent, through its encoder (src/sql/settle.ts) and its decoder
// (sql/functions/settle_records.sql), comes back as it went in.

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const token = '6f1c8a52-0a47-4a53-9d59-0b7c1f0e6a11'
const at = new Date('2026-01-02T03:04:05.678Z')

/** The decoder's rows as JSON, ids as text (a bigint past 2^53 stays exact). */
async function decode(fn: string, encoded: string): Promise<Record<string, unknown>[]> {
  const rows = await env!.sql(
    `SELECT to_jsonb(r) || jsonb_build_object('id', r.id::text) AS r FROM $schema.${fn}($1::jsonb) r`,
    [encoded],
  )
  return rows.map((row) => row.r as Record<string, unknown>)
}

const iso = (v: unknown): unknown => (typeof v === 'string' ? new Date(v).toISOString() : v)

test('completions round-trip every field', async () => {
  env = await makeSluice({ jobs: [] })
  const encoded = encodeCompletions([
    { id: '9007199254740993', token, status: 'completed', durationMs: 3_000_000_000, waitMs: 2_500_000_000 },
    { id: '2', token, status: 'expired', durationMs: null, waitMs: 0 },
  ])
  expect(await decode('settle_completions', encoded)).toEqual([
    {
      id: '9007199254740993',
      token,
      status: 'completed',
      duration_ms: 3_000_000_000,
      wait_ms: 2_500_000_000,
    },
    { id: '2', token, status: 'expired', duration_ms: null, wait_ms: 0 },
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
      keepPlace: at,
    },
    {
      id: '4',
      token,
      error: { name: 'Error', message: '' },
      delayMs: 0,
      final: false,
      durationMs: null,
      waitMs: 0,
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
    },
    {
      id: '4',
      token,
      error: { name: 'Error', message: '' },
      delay_ms: 0,
      final: false,
      keep_place: null,
      duration_ms: null,
      wait_ms: 0,
    },
  ])
})

test('hand-backs round-trip every field', async () => {
  env = await makeSluice({ jobs: [] })
  const rows = await decode('settle_hand_backs', encodeHandBacks([{ id: '5', token, dueAt: at }]))
  expect(rows.map((r) => ({ ...r, due_at: iso(r.due_at) }))).toEqual([
    { id: '5', token, due_at: at.toISOString() },
  ])
})
