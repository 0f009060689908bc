/**
 * How busy a drain keeps its handler slots when job durations differ: enqueues `--jobs` jobs
 * that sleep for their given time, drains them with default options (concurrency 10) in a loop
 * until none is left, and prints the share of slot time spent running jobs (the sum of their
 * durations over the wall time × concurrency) against the ideal wall time.
 *
 *   DATABASE_URL=… npx tsx bench/slot-use.ts [--jobs 300] [--mix uniform|skewed]
 *
 * `uniform`: durations spread evenly over 10–500 ms. `skewed`: one job in 20 takes 2 s, the
 * rest 50 ms (a few slow calls among quick ones).
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import * as z from 'zod'
import { createSluice, defineJob } from '../src/index.js'

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '300' }, mix: { type: 'string', default: 'skewed' } },
})
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const jobs = Number(values.jobs)
const CONCURRENCY = 10
const schema = `slots_${Date.now().toString(36)}`

let busyMs = 0
const sleeper = defineJob({
  name: 'sleeper',
  input: z.object({ ms: z.number() }),
  run: async ({ ms }) => {
    busyMs += ms
    await new Promise((resolve) => setTimeout(resolve, ms))
  },
})
const sluice = createSluice({ database: url, schema, jobs: [sleeper] })
const durations = Array.from({ length: jobs }, (_, i) =>
  values.mix === 'uniform' ? 10 + Math.round((490 * i) / Math.max(1, jobs - 1)) : i % 20 === 0 ? 2_000 : 50,
)
try {
  await sluice.migrate()
  await sluice.enqueueMany(
    sleeper,
    durations.map((ms) => ({ ms })),
  )
  const started = performance.now()
  let completed = 0
  for (;;) {
    const summary = await sluice.drain({ concurrency: CONCURRENCY })
    completed += summary.completed
    if (summary.claimed === 0) break
  }
  const wallMs = performance.now() - started
  const idealMs = durations.reduce((a, b) => a + b, 0) / CONCURRENCY
  console.log(
    `${values.mix}: ${completed} jobs in ${(wallMs / 1000).toFixed(1)} s (ideal ${(idealMs / 1000).toFixed(1)} s), ` +
      `slot use ${((100 * busyMs) / (wallMs * CONCURRENCY)).toFixed(0)} %`,
  )
} finally {
  await sluice.close()
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
}
