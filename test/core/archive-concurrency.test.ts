/**
 * The archive of groups (migration 0023) under drains side by side: four drains on four
 * connections settle batches of the same queue at once, so their rows share ranges of ids. Every
 * job is archived once, and each of its columns stays with it: its payload, its result (which the
 * handler derives from the payload), its name and its queue, read back through the view and
 * through archived_job(id), as inspect.job(id) reads it.
 */
import pg from 'pg'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob, fromPg, type Sluice } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

const JOBS = 2_000
const DRAINS = 4

let env: TestSluice
const pools: pg.Pool[] = []

beforeAll(async () => {
  env = await makeSluice({ jobs: [] })
})
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()))
  await env.cleanup()
})

const jobsOf = (d: number) => [
  defineJob({
    name: 'even',
    queue: 'mixed',
    input: z.object({ n: z.number() }),
    run: async ({ n }) => ({ n, by: d }),
  }),
  defineJob({
    name: 'odd',
    queue: 'mixed',
    input: z.object({ n: z.number() }),
    run: async ({ n }) => ({ n, by: d }),
  }),
]

test(`${DRAINS} drains settling the same ranges of ids archive each of ${JOBS} jobs once, with its own columns`, async () => {
  const sluices: Sluice[] = []
  for (let d = 0; d < DRAINS; d++) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 })
    pools.push(pool)
    sluices.push(createSluice({ database: fromPg(pool), schema: env.schema, jobs: jobsOf(d) }))
  }
  const [first] = sluices
  const ids = new Map<string, number>()
  for (const name of ['even', 'odd']) {
    const ns = Array.from({ length: JOBS / 2 }, (_, i) => 2 * i + (name === 'odd' ? 1 : 0))
    const results = await first!.enqueueMany(
      name,
      ns.map((n) => ({ n })),
    )
    for (const [i, r] of results.entries()) ids.set(r.id!, ns[i]!)
  }
  // Small batches, so that many settles of different drains land in each range of 1,024 ids.
  const loop = async (s: Sluice): Promise<number> => {
    let done = 0
    for (;;) {
      const summary = await s.drain({ queues: ['mixed'], batchSize: 20, concurrency: 5 })
      done += summary.completed
      if (summary.claimed === 0) return done
    }
  }
  const done = await Promise.all(sluices.map(loop))
  expect(done.reduce((a, b) => a + b, 0)).toBe(JOBS)
  // The drains did share the work, so their settles met in the same ranges.
  expect(done.filter((n) => n > 0).length).toBeGreaterThan(1)
  const groups = await env.sql<{ n: number; invocations: number }>(
    `SELECT count(*)::int AS n, count(DISTINCT invocation)::int AS invocations FROM $schema.archive_groups`,
  )
  expect(groups[0]!.n).toBeLessThan(JOBS)
  expect(groups[0]!.invocations).toBeGreaterThan(1)

  const rows = await env.sql<{
    id: string
    name: string
    queue: string
    payload: { n: number }
    result: { n: number }
  }>('SELECT id::text, name, queue, payload, result FROM $schema.archive')
  expect(rows).toHaveLength(JOBS)
  expect(new Set(rows.map((r) => r.id)).size).toBe(JOBS)
  for (const row of rows) {
    const n = ids.get(row.id)
    expect({ id: row.id, n: row.payload.n, result: row.result.n, name: row.name, queue: row.queue }).toEqual({
      id: row.id,
      n,
      result: n,
      name: n! % 2 ? 'odd' : 'even',
      queue: 'mixed',
    })
  }
  // By id, as inspect.job(id) finds a job: a sample from every range.
  for (const [id, n] of [...ids].filter((_, i) => i % 97 === 0)) {
    const job = await first!.inspect.job(id)
    expect({ id: job?.id, state: job?.state, payload: job?.payload }).toEqual({
      id,
      state: 'completed',
      payload: { n },
    })
    expect(await first!.result(id)).toMatchObject({ state: 'completed', result: { n } })
  }
  await Promise.all(sluices.map((s) => s.close()))
})
