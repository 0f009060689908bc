import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Db } from '../../src/index.js'
import { encodeCompletions, encodeFailures, encodeHandBacks } from '../../src/sql/index.js'
import { adapterCases } from '../helpers/adapters.js'

// The settle's lists go as parallel typed arrays (src/sql/settle.ts): every driver Sluice runs on
// must send them so that the server reads back what was encoded, big ids, nulls, strings an array
// literal must quote and empty lists included.

const token = '6f1c8a52-0a47-4a53-9d59-0b7c1f0e6a11'
const hostile = 'a "quoted", {braced} \\ back-slashed\nmessage'

describe.each(adapterCases)('settle arrays on $name', (adapter) => {
  let db: Db
  let close: () => Promise<void>
  beforeAll(async () => {
    const opened = await adapter.open()
    db = opened.db
    close = opened.close
  })
  afterAll(async () => {
    await close()
  })

  test('completions and hand-backs', async () => {
    const [id, tok, status, duration, wait, lag] = encodeCompletions([
      { id: '9007199254740993', token, status: 'completed', durationMs: 3_000_000_000, waitMs: 2, lagMs: 1 },
      { id: '2', token, status: 'expired', durationMs: null, waitMs: 0 },
    ])
    const { rows } = await db.query<Record<string, unknown>>({
      text: `SELECT a.id::text AS id, a.token::text AS token, a.status, a.d::text AS d, a.w::text AS w, a.l::text AS l
             FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])
               AS a(id, token, status, d, w, l)`,
      values: [id, tok, status, duration, wait, lag],
    })
    expect(rows).toEqual([
      { id: '9007199254740993', token, status: 'completed', d: '3000000000', w: '2', l: '1' },
      { id: '2', token, status: 'expired', d: null, w: '0', l: null },
    ])
    const at = new Date('2026-01-02T03:04:05.678Z')
    const back = encodeHandBacks([{ id: '5', token, dueAt: at }])
    const handed = await db.query<{ id: string; ms: string }>({
      text: `SELECT a.id::text AS id, (extract(epoch FROM a.due_at) * 1000)::bigint::text AS ms
             FROM unnest($1::bigint[], $2::uuid[], $3::timestamptz[]) AS a(id, token, due_at)`,
      values: back,
    })
    expect(handed.rows).toEqual([{ id: '5', ms: String(at.getTime()) }])
  })

  test('failures, with an error an array literal must quote, and empty lists', async () => {
    const encoded = encodeFailures([
      {
        id: '3',
        token,
        error: { name: 'NULL', message: hostile, code: 'JOB_TIMEOUT' },
        delayMs: 10.4,
        final: true,
        durationMs: null,
        waitMs: 0,
        keepPlace: new Date(0),
      },
    ])
    const { rows } = await db.query<Record<string, unknown>>({
      text: `SELECT a.n, a.m, a.c, a.d::text AS d, a.f, a.k IS NOT NULL AS k, a.s IS NULL AS s
             FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::boolean[],
                         $8::timestamptz[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[])
               AS a(i, t, n, m, c, d, f, k, du, w, l, s)`,
      values: encoded,
    })
    expect(rows).toEqual([{ n: 'NULL', m: hostile, c: 'JOB_TIMEOUT', d: '10', f: true, k: true, s: true }])
    const empty = await db.query<{ n: number }>({
      text: 'SELECT cardinality($1::bigint[]) + cardinality($2::uuid[]) AS n',
      values: encodeHandBacks([]).slice(0, 2),
    })
    expect(empty.rows).toEqual([{ n: 0 }])
  })
})
