import pg from 'pg'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob, fromPg, type Sluice } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

const JOBS = 20_000
const DRAINS = 8

let env: TestSluice
const pools: pg.Pool[] = []
let recorder: pg.Pool

beforeAll(async () => {
  env = await makeSluice({ jobs: [] })
  await env.sql(
    `CREATE TABLE $schema.runs (job_id bigint NOT NULL, drain int NOT NULL, started_at timestamptz NOT NULL, ended_at timestamptz NOT NULL)`,
  )
  recorder = new pg.Pool({ connectionString: databaseUrl, max: 8 })
})
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()))
  await recorder.end()
  await env.cleanup()
})

test(`${DRAINS} drains on ${DRAINS} connections run ${JOBS} jobs exactly once, never overlapping`, async () => {
  const table = `"${env.schema}".runs`
  // Handlers record each execution in a table; the batch insert keeps the recorder from dominating the run.
  const pending: { id: string; drain: number; started: Date; ended: Date }[] = []
  const flush = async (): Promise<void> => {
    const rows = pending.splice(0)
    if (rows.length === 0) return
    await recorder.query(
      `INSERT INTO ${table} SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(job_id bigint, drain int, started_at timestamptz, ended_at timestamptz)`,
      [
        JSON.stringify(
          rows.map((r) => ({ job_id: r.id, drain: r.drain, started_at: r.started, ended_at: r.ended })),
        ),
      ],
    )
  }
  const sluices: Sluice[] = []
  for (let d = 0; d < DRAINS; d++) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 })
    pools.push(pool)
    const job = defineJob({
      name: 'work',
      input: z.object({ n: z.number() }),
      run: async (_input, ctx) => {
        const started = new Date()
        await new Promise((resolve) => setImmediate(resolve))
        pending.push({ id: ctx.id, drain: d, started, ended: new Date() })
      },
    })
    sluices.push(
      createSluice({
        database: fromPg(pool),
        schema: env.schema,
        jobs: [job],
        drain: { batchSize: 25, concurrency: 5 },
      }),
    )
  }
  for (let i = 0; i < JOBS; i += 10_000) {
    await sluices[0]!.enqueueMany(
      'work',
      Array.from({ length: 10_000 }, (_, n) => ({ n: i + n })),
    )
  }
  const totals = await Promise.all(
    sluices.map(async (sluice) => {
      let completed = 0
      for (;;) {
        const summary = await sluice.drain({ budgetMs: 60_000 })
        completed += summary.completed
        await flush()
        if (summary.claimed === 0) return completed
      }
    }),
  )
  await flush()
  expect(totals.reduce((a, b) => a + b, 0)).toBe(JOBS)
  // Real contention: most drains did some of the work.
  expect(totals.filter((n) => n > 0).length).toBeGreaterThanOrEqual(DRAINS / 2)

  const [counts] = await env.sql<{ runs: number; distinct: number; twice: number }>(
    `SELECT count(*)::int AS runs, count(DISTINCT job_id)::int AS distinct,
            (SELECT count(*)::int FROM (SELECT job_id FROM $schema.runs GROUP BY job_id HAVING count(*) > 1) d) AS twice
     FROM $schema.runs`,
  )
  expect(counts).toEqual({ runs: JOBS, distinct: JOBS, twice: 0 })
  const [overlaps] = await env.sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM $schema.runs a JOIN $schema.runs b
       ON a.job_id = b.job_id AND a.ctid < b.ctid AND a.started_at < b.ended_at AND b.started_at < a.ended_at`,
  )
  expect(overlaps!.n).toBe(0)
  const [left] = await env.sql<{ jobs: number; archived: number }>(
    `SELECT (SELECT count(*)::int FROM $schema.jobs) AS jobs, (SELECT count(*)::int FROM $schema.archive) AS archived`,
  )
  expect(left).toEqual({ jobs: 0, archived: JOBS })
}, 180_000)
