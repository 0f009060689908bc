/**
 * The archive's storage (migration 0023): the jobs one settle ends are kept as one row per queue,
 * status, invocation and range of 1,024 ids (`bucket = id >> 10`), not a row and an index entry per
 * job. The `archive` view reads them back a job per row; `archived_job(id)` finds one job through
 * the rows of its range. Retention prunes whole rows, and counts their jobs.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { pruneArchive } from '../../src/sql/maintenance.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

const INV = 'drn_archive'

/** Completes the jobs with settle_complete, each with `{ n }` as its result. */
async function complete(jobs: { id: string; token: string | null }[], status = 'completed'): Promise<number> {
  const [out] = await s.sql<{ n: number }>(
    `SELECT n FROM $t.settle_complete(
       p_id => $1::bigint[], p_token => $2::uuid[], p_status => $3::text[], p_duration_ms => $4::bigint[],
       p_wait_ms => $5::bigint[], p_lag_ms => $6::bigint[], p_result => $7::text[])`,
    [
      jobs.map((j) => j.id),
      jobs.map((j) => j.token),
      jobs.map(() => status),
      jobs.map((_, i) => 10 + i),
      jobs.map(() => 2),
      jobs.map(() => null),
      jobs.map((_, i) => JSON.stringify({ n: i })),
    ],
  )
  return out!.n
}

describe('settle_complete into the archive', () => {
  it('writes one row per range of 1,024 ids, and every job is found by its id', async () => {
    // Ids 1001..1040 straddle the range boundary at 1024.
    await s.sql(`SELECT setval(pg_get_serial_sequence('$t.jobs', 'id'), 1000)`)
    const jobs = []
    for (let i = 0; i < 40; i++)
      jobs.push(await s.rows.leased(INV, { name: i % 2 ? 'odd' : 'even', queue: 'q', payload: { i } }))
    expect(jobs[0]!.id).toBe('1001')
    expect(await complete(jobs)).toBe(40)

    expect(
      await s.sql(
        'SELECT bucket::int, queue, status, invocation, cardinality(ids) AS n FROM $t.archive_groups ORDER BY bucket',
      ),
    ).toEqual([
      { bucket: 0, queue: 'q', status: 'completed', invocation: INV, n: 23 },
      { bucket: 1, queue: 'q', status: 'completed', invocation: INV, n: 17 },
    ])
    expect(await s.sql('SELECT count(*)::int AS n FROM $t.archive')).toEqual([{ n: 40 }])

    for (const [i, job] of jobs.entries()) {
      const [row] = await s.sql<Record<string, unknown>>(
        'SELECT id::text, queue, name, payload, status, duration_ms::int, wait_ms::int, invocation, result FROM $t.archived_job($1)',
        [job.id],
      )
      expect(row).toEqual({
        id: job.id,
        queue: 'q',
        name: i % 2 ? 'odd' : 'even',
        payload: { i },
        status: 'completed',
        duration_ms: 10 + i,
        wait_ms: 2,
        invocation: INV,
        result: { n: i },
      })
    }
    expect(await s.sql('SELECT * FROM $t.archived_job(1041)')).toEqual([])
  })

  it('keeps the queues, statuses and invocations of one settle apart, and a failure history per job', async () => {
    const a = await s.rows.leased(INV, { queue: 'a' })
    const b = await s.rows.leased(INV, {
      queue: 'b',
      attempts: 2,
      errors: [{ attempt: 1, message: 'first' }],
    })
    const c = await s.rows.leased('drn_other', { queue: 'a' })
    expect(await complete([a, b, c])).toBe(3)
    const expired = await s.rows.leased(INV, { queue: 'a' })
    expect(await complete([expired], 'expired')).toBe(1)
    expect(
      await s.sql(
        'SELECT queue, status, invocation, cardinality(ids) AS n FROM $t.archive_groups ORDER BY queue, status, invocation',
      ),
    ).toEqual([
      { queue: 'a', status: 'completed', invocation: INV, n: 1 },
      { queue: 'a', status: 'completed', invocation: 'drn_other', n: 1 },
      { queue: 'a', status: 'expired', invocation: INV, n: 1 },
      { queue: 'b', status: 'completed', invocation: INV, n: 1 },
    ])
    expect(await s.sql('SELECT errors FROM $t.archived_job($1)', [b.id])).toEqual([
      { errors: [{ attempt: 1, message: 'first' }] },
    ])
    expect(await s.sql('SELECT errors FROM $t.archived_job($1)', [a.id])).toEqual([{ errors: null }])
  })

  it('takes rows inserted into the archive view, as settles written before the view did', async () => {
    const id = await s.rows.archived({ queue: 'old', status: 'expired', durationMs: 7 })
    expect(await s.sql('SELECT queue, status, duration_ms::int FROM $t.archived_job($1)', [id])).toEqual([
      { queue: 'old', status: 'expired', duration_ms: 7 },
    ])
  })
})

describe("the arrays' compression (migration 0028)", () => {
  it('is lz4 where the server has it, and a settle of 300 jobs with large payloads reads back whole', async () => {
    const [server] = await s.sql<{ lz4: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_settings
                      WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) AS lz4`,
    )
    const columns = await s.sql<{ table: string; column: string; method: string }>(
      `SELECT c.relname AS table, a.attname AS column, coalesce(nullif(a.attcompression, ''), '-') AS method
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
       WHERE c.relnamespace = '$t'::regnamespace AND c.relname IN ('archive_groups', 'job_stats')
         AND a.attnum > 0 AND NOT a.attisdropped AND a.atttypid IN (SELECT oid FROM pg_type WHERE typcategory = 'A')
       ORDER BY 1, 2`,
    )
    expect(columns.map((c) => `${c.table}.${c.column}`)).toEqual([
      'archive_groups.attempts',
      'archive_groups.durations_ms',
      'archive_groups.enqueued_at',
      'archive_groups.errors',
      'archive_groups.ids',
      'archive_groups.max_attempts',
      'archive_groups.names',
      'archive_groups.payloads',
      'archive_groups.priorities',
      'archive_groups.results',
      'archive_groups.waits_ms',
      'job_stats.durations',
      'job_stats.waits',
    ])
    // 'l' is lz4; '-' the server's default (pglz unless set otherwise).
    expect(new Set(columns.map((c) => c.method))).toEqual(new Set([server?.lz4 ? 'l' : '-']))

    const text = 'x'.repeat(3_000)
    const jobs = []
    for (let i = 0; i < 300; i++) jobs.push(await s.rows.leased(INV, { queue: 'q', payload: { i, text } }))
    expect(await complete(jobs)).toBe(300)
    const back = await s.sql<{ n: number; whole: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE payload->>'text' = $1)::int AS whole FROM $t.archive`,
      [text],
    )
    expect(back).toEqual([{ n: 300, whole: 300 }])
  })
})

describe('prune-archive over archive rows', () => {
  it('deletes the rows past the retention with their jobs steps, counting jobs, at most about the limit', async () => {
    const old = []
    for (let i = 0; i < 6; i++) old.push(await s.rows.leased(INV, { queue: 'q' }))
    await complete(old.slice(0, 3))
    await complete(old.slice(3))
    const recent = await s.rows.leased(INV, { queue: 'q' })
    await complete([recent])
    await s.sql(
      `UPDATE $t.archive_groups SET finished_at = now() - interval '2 days' WHERE $1::bigint <> ALL (ids)`,
      [recent.id],
    )
    await s.sql(
      `INSERT INTO $t.job_steps (job_id, seq, name, kind, state)
       VALUES ($1, 1, 'a', 'run', 'completed'), ($2, 1, 'a', 'run', 'completed')`,
      [old[0]!.id, recent.id],
    )
    const prune = (limit: number) => s.run<{ n: number }>(pruneArchive(s.t, 86_400_000, limit))
    // A limit of 2 jobs takes the first row of 3 (a row is never split), not the second.
    expect(await prune(2)).toEqual([{ n: 3 }])
    expect(await prune(100)).toEqual([{ n: 3 }])
    expect(await prune(100)).toEqual([{ n: 0 }])
    expect(await s.sql('SELECT id::text FROM $t.archive')).toEqual([{ id: recent.id }])
    expect(await s.sql('SELECT job_id::text FROM $t.job_steps')).toEqual([{ job_id: recent.id }])
  })
})
