/**
 * inspect.database(): Sluice's tables' tuples and sizes, and the xmin horizon. A REPEATABLE READ
 * transaction held open on another connection keeps the dead rows of completed jobs; the
 * warning names it once the jobs table has dead rows, and no longer once it is closed. Other
 * work on the same server may hold the horizon too, so the test looks for its own holder.
 */
import pg from 'pg'
import { afterAll, beforeAll, expect, test } from 'vitest'
import * as z from 'zod'
import { type DatabaseHealth, defineJob } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

const quick = defineJob({ name: 'quick', queue: 'quick', input: z.object({}).default({}), run: () => {} })

let t: TestSluice
beforeAll(async () => {
  t = await makeSluice({ jobs: [quick] })
})
afterAll(() => t.cleanup())

/** Polls inspect.database (warning past 0 ms held) until `accept` holds, for at most 30 s. */
async function healthWhen(accept: (h: DatabaseHealth) => boolean): Promise<DatabaseHealth> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const h = await t.sluice.inspect.database({ heldMs: 0 })
    if (accept(h) || Date.now() > deadline) return h
    await new Promise((r) => setTimeout(r, 100))
  }
}

test('a transaction held open while jobs complete: the warning appears, and goes once it closes', async () => {
  const held = new pg.Client({ connectionString: databaseUrl, application_name: 'held-open-test' })
  await held.connect()
  try {
    await held.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
    const pid = Number((await held.query('SELECT pg_backend_pid() AS pid')).rows[0].pid)

    await t.sluice.enqueueMany(
      quick,
      Array.from({ length: 30 }, () => ({})),
    )
    while ((await t.sluice.drain({ queues: ['quick'] })).completed > 0) {}

    t.statements.reset()
    const ours = (h: DatabaseHealth) => h.horizon.find((x) => x.pid === pid)
    const jobs = (h: DatabaseHealth) => h.tables.find((x) => x.table === 'jobs')
    const during = await healthWhen((h) => ours(h) !== undefined && (jobs(h)?.deadTuples ?? 0) > 0)
    expect(ours(during)).toMatchObject({
      kind: 'transaction',
      state: 'idle in transaction',
      applicationName: 'held-open-test',
      // Another session's SQL text only when asked for: it may be another application's.
      query: null,
    })
    const shown = await t.sluice.inspect.database({ heldMs: 0 }, { queries: true })
    expect(shown.horizon.find((x) => x.pid === pid)?.query).toBe('SELECT pg_backend_pid() AS pid')
    expect(jobs(during)!.deadTuples).toBeGreaterThan(0)
    expect(jobs(during)!.bytes).toBeGreaterThan(0)
    expect(jobs(during)!.bloat).toBeGreaterThan(0)
    expect(during.warning).toMatch(
      /has held the xmin horizon back \d+ transactions for \d+ s: the \d+ dead rows/,
    )
    // Sluice's tables, every one with its figures.
    expect(during.tables.map((x) => x.table)).toEqual(
      expect.arrayContaining(['jobs', 'archive_groups', 'queues']),
    )

    await held.query('COMMIT')
    const after = await healthWhen((h) => ours(h) === undefined)
    expect(ours(after)).toBeUndefined()
    expect(after.warning ?? '').not.toContain(`pid ${pid} `)
  } finally {
    await held.end()
  }
})

test('with the default thresholds a fresh transaction is no warning of its own; bad thresholds are refused', async () => {
  const h = await t.sluice.inspect.database()
  expect(h.warning ?? '').not.toContain('held-open-test')
  await expect(t.sluice.inspect.database({ heldMs: -1 })).rejects.toThrow(/thresholds/)
})
