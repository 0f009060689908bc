import { afterAll, afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob, fromPg, PermanentJobError, ValidationError } from '../../src/index.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
import { migrate } from '../../src/migrate/run.js'
import { databaseUrl, makeSluice, pgPool, type TestSluice, uniqueSchema } from '../helpers/db.js'
import { appFor, countJobs, errorOf, postJson } from '../helpers/http.js'

const DAY = 86_400_000
/** Past the largest `integer` count of milliseconds (2^31 - 1 ms is 24.86 days). */
const LONG_AGO = 26 * DAY

const noop = defineJob({ name: 'noop', input: z.object({ n: z.number() }), run: () => {} })
const flaky = defineJob({
  name: 'flaky',
  input: z.object({}),
  retry: { maxAttempts: 3, baseDelayMs: 60_000 },
  run: () => {
    throw new Error('not yet')
  },
})
const doomed = defineJob({
  name: 'doomed',
  input: z.object({}),
  run: () => {
    throw new PermanentJobError('never')
  },
})

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

describe('jobs that waited longer than an integer of milliseconds', () => {
  test('a job due 26 days ago settles with the rest of its batch: completed, retried and dead-lettered', async () => {
    env = await makeSluice({ jobs: [noop, flaky, doomed] })
    const runAt = new Date(Date.now() - LONG_AGO)
    await env.sluice.enqueue(noop, { n: 1 }, { runAt })
    await env.sluice.enqueue(noop, { n: 2 })
    await env.sluice.enqueue(flaky, {}, { runAt })
    await env.sluice.enqueue(doomed, {}, { runAt })

    const summary = await env.sluice.drain()
    expect(summary).toMatchObject({ claimed: 4, completed: 2, retried: 1, deadLettered: 1 })

    const archived = await env.sql<{ n: number; wait_ms: string }>(
      `SELECT (payload->>'n')::int AS n, wait_ms::text FROM $schema.archive ORDER BY n`,
    )
    expect(archived.map((r) => r.n)).toEqual([1, 2])
    expect(Number(archived[0]!.wait_ms)).toBeGreaterThanOrEqual(LONG_AGO)
    expect(Number(archived[1]!.wait_ms)).toBeLessThan(LONG_AGO)
    const stats = await env.sql<{ status: string; long: boolean }>(
      `SELECT status, wait_ms >= $1 AS long FROM $schema.job_stats_runs ORDER BY status, long`,
      [LONG_AGO],
    )
    expect(stats).toEqual([
      { status: 'completed', long: false },
      { status: 'completed', long: true },
      { status: 'dead', long: true },
      { status: 'failed', long: true },
    ])
    // Nothing left leased: the retry waits for its backoff, unleased.
    const left = await env.sql<{ name: string; leased: boolean }>(
      `SELECT name, lease_token IS NOT NULL AS leased FROM $schema.jobs`,
    )
    expect(left).toEqual([{ name: 'flaky', leased: false }])
  })

  test('wait and duration columns are bigint, and the settle reads them as bigint', async () => {
    env = await makeSluice({ jobs: [noop] })
    const columns = await env.sql<{ table_name: string; column_name: string; data_type: string }>(
      `SELECT table_name, column_name, data_type FROM information_schema.columns
       WHERE table_schema = $1 AND column_name IN ('wait_ms', 'duration_ms') ORDER BY 1, 2`,
      [env.schema],
    )
    expect(columns).toEqual([
      { table_name: 'archive', column_name: 'duration_ms', data_type: 'bigint' },
      { table_name: 'archive', column_name: 'wait_ms', data_type: 'bigint' },
      { table_name: 'job_stats', column_name: 'duration_ms', data_type: 'bigint' },
      { table_name: 'job_stats', column_name: 'wait_ms', data_type: 'bigint' },
      { table_name: 'job_stats_runs', column_name: 'duration_ms', data_type: 'bigint' },
      { table_name: 'job_stats_runs', column_name: 'wait_ms', data_type: 'bigint' },
    ])
    const arrays = await env.sql<{ column_name: string; udt_name: string }>(
      `SELECT column_name, udt_name FROM information_schema.columns
       WHERE table_schema = $1 AND table_name = 'job_stats' AND column_name IN ('durations', 'waits') ORDER BY 1`,
      [env.schema],
    )
    expect(arrays).toEqual([
      { column_name: 'durations', udt_name: '_int8' },
      { column_name: 'waits', udt_name: '_int8' },
    ])
  })
})

describe('a database migrated before the columns were widened', () => {
  const admin = pgPool(2)
  const schema = uniqueSchema('upg')
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await admin.end()
  })

  test('upgrades in place: rows kept, long waits settle', async () => {
    const db = fromPg(admin)
    const before = migrations.filter((m) => m.version <= 8)
    expect((await migrate(db, schema, before)).version).toBe(8)
    await admin.query(
      `INSERT INTO "${schema}".archive (id, queue, name, payload, priority, attempts, max_attempts, status,
                                        enqueued_at, duration_ms, wait_ms)
       VALUES (1000000, 'default', 'noop', '{"n": 0}', 16384, 1, 5, 'completed', now(), 12, 34)`,
    )
    await admin.query(
      `INSERT INTO "${schema}".job_stats (name, queue, status, duration_ms, wait_ms) VALUES ('noop', 'default', 'completed', 12, 34)`,
    )

    const sluice = createSluice({ database: databaseUrl, schema, jobs: [noop] })
    try {
      const result = await sluice.migrate()
      expect(result.applied).toEqual(migrations.filter((m) => m.version > 8).map((m) => m.version))
      const { rows: kept } = await admin.query(
        `SELECT duration_ms::int AS d, wait_ms::int AS w FROM "${schema}".archive`,
      )
      expect(kept).toEqual([{ d: 12, w: 34 }])
      await sluice.enqueue(noop, { n: 1 }, { runAt: new Date(Date.now() - LONG_AGO) })
      expect(await sluice.drain()).toMatchObject({ claimed: 1, completed: 1 })
      const { rows } = await admin.query(
        `SELECT count(*)::int AS n FROM "${schema}".job_stats_runs WHERE wait_ms >= $1`,
        [LONG_AGO],
      )
      expect(rows).toEqual([{ n: 1 }])
    } finally {
      await sluice.close()
    }
  })
})

describe('runAt is bounded like delay: within 10 years of now', () => {
  test.each([
    ['year 0001', '0001-01-01T00:00:00Z'],
    ['year 9999', '9999-12-31T23:59:59Z'],
    ['11 years ago', new Date(Date.now() - 11 * 365 * DAY)],
    ['11 years ahead', new Date(Date.now() + 11 * 365 * DAY)],
    ['a year before the common era', new Date(-1e15)],
    ['an invalid date', new Date(Number.NaN)],
  ])('refused: %s; nothing written', async (_, runAt) => {
    env = await makeSluice({ jobs: [noop] })
    const error = await env.sluice.enqueue(noop, { n: 1 }, { runAt }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ValidationError)
    expect(error).toMatchObject({ code: 'INVALID_INPUT' })
    expect((error as ValidationError).issues?.[0]?.path).toEqual(['runAt'])
    expect(await env.sluice.enqueueMany(noop, [{ n: 1 }], { runAt }).catch((e: unknown) => e)).toBeInstanceOf(
      ValidationError,
    )
    expect(await countJobs(env)).toBe(0)
    expect(env.statements.count).toBe(0)
  })

  test('accepted: 26 days ago, 9 years ahead', async () => {
    env = await makeSluice({ jobs: [noop] })
    await env.sluice.enqueue(noop, { n: 1 }, { runAt: new Date(Date.now() - LONG_AGO) })
    await env.sluice.enqueue(noop, { n: 2 }, { runAt: new Date(Date.now() + 9 * 365 * DAY).toISOString() })
    expect(await countJobs(env)).toBe(2)
  })

  test('over HTTP: a 400 naming runAt; nothing written', async () => {
    env = await makeSluice({ jobs: [noop] })
    const app = appFor(env)
    for (const runAt of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
      const res = await postJson(app, '/jobs/noop', { input: { n: 1 }, runAt })
      expect(res.status).toBe(400)
      const error = await errorOf(res)
      expect(error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('runAt') })
      expect(error.issues?.[0]?.path).toEqual(['runAt'])
    }
    // A value that is no date at all gets that one issue, not the bound's as well.
    const notADate = await errorOf(await postJson(app, '/jobs/noop', { input: { n: 1 }, runAt: 'tomorrow' }))
    expect(notADate.issues).toHaveLength(1)
    expect(notADate.issues?.[0]?.message).not.toMatch(/10 years/)
    expect(await countJobs(env)).toBe(0)
  })
})
