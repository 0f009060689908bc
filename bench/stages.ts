/**
 * Where the database's time goes, stage by stage: drains `--jobs` jobs of one queue, plain or
 * under an admission policy (concurrency + throttle + fair over 100 partitions, as
 * bench/admission.ts), with PostgreSQL's function statistics on for the drain's sessions
 * (`track_functions = all`), and prints each of the claim's and the settle's stage functions:
 * calls, time in it (total, and its own without the functions it calls) per call and per job.
 *
 *   DATABASE_URL=… npx tsx bench/stages.ts [--kind plain|policy] [--jobs 20000] [--batch 50]
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { createSluice, fromPg } from '../src/index.js'
import { governedJob, plainJob } from './lib/admission-jobs.js'

const { values } = parseArgs({
  options: {
    kind: { type: 'string', default: 'policy' },
    jobs: { type: 'string', default: '20000' },
    batch: { type: 'string', default: '50' },
  },
})
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const jobs = Number(values.jobs)
const batch = Number(values.batch)
const job = values.kind === 'plain' ? plainJob : governedJob
const schema = `stages_${Date.now().toString(36)}`
const pool = new pg.Pool({ connectionString: url, max: 4, options: '-c track_functions=all' })
// Enqueued by a Sluice of its own, whose sessions are not counted.
const loader = createSluice({ database: url, schema, jobs: [job] })
const sluice = createSluice({
  database: fromPg(pool),
  schema,
  jobs: [job],
  drain: { budgetMs: 600_000, batchSize: batch, concurrency: batch },
})
const admin = new pg.Client({ connectionString: url })
await admin.connect()
try {
  await loader.migrate()
  for (let i = 0; i < jobs; i += 5_000)
    await loader.enqueueMany(
      job,
      Array.from({ length: Math.min(5_000, jobs - i) }, (_, k) => ({ n: i + k })),
    )
  await loader.close()
  const started = performance.now()
  let done = 0
  while (done < jobs) {
    const summary = await sluice.drain()
    done += summary.completed
    if (summary.claimed === 0) break
  }
  const seconds = (performance.now() - started) / 1000
  await sluice.close()
  await pool.end()
  // Function statistics reach the shared counters when a session ends (or every second).
  let rows: { funcname: string; calls: string; total: number; self: number }[] = []
  for (let i = 0; i < 50 && rows.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    ;({ rows } = await admin.query(
      `SELECT funcname, calls, total_time AS total, self_time AS self FROM pg_stat_user_functions
       WHERE schemaname = $1 ORDER BY total_time DESC`,
      [schema],
    ))
  }
  console.log(
    `${values.kind}: ${done} jobs in ${seconds.toFixed(2)} s, ${(done / seconds).toFixed(0)} jobs/s, batch ${batch}`,
  )
  console.log('| function | calls | total ms/call | self ms/call | self µs/job |')
  console.log('| --- | --- | --- | --- | --- |')
  for (const r of rows) {
    const calls = Number(r.calls)
    console.log(
      `| ${r.funcname} | ${calls} | ${(r.total / calls).toFixed(3)} | ${(r.self / calls).toFixed(3)} | ${((r.self * 1000) / done).toFixed(1)} |`,
    )
  }
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
  await admin.end()
}
