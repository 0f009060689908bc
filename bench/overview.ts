/**
 * The dashboard overview statement (inspect.overview()) at 1M jobs and 1M archived rows: server
 * time p50/p95 from EXPLAIN (ANALYZE, BUFFERS) over 50 runs, and the plan of the last run.
 *
 * Seeds a fresh schema with generate_series: 1M jobs over 8 queues (ready at 3 priorities,
 * scheduled, waiting for a retry, a few hundred running), a few blocked, 1M archive rows,
 * an hour of job_stats (1,000 finished attempts a minute, `--per-row` attempts to a row as one
 * settle of that many jobs of a name writes them; 1 for rows of the form before migration 0015),
 * 10,000 dead letters and a few live drains; then VACUUM ANALYZE, as autovacuum would leave the
 * tables.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/overview.ts [--jobs 1000000] [--archived 1000000] [--runs 50] [--per-row 25] [--keep]
 *
 * `--keep` leaves the schema; `--schema <name>` measures one seeded before (and kept) again.
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { fromPg } from '../src/db/pg.js'
import { migrate } from '../src/migrate/run.js'
import { OVERVIEW_LIMITS, type Overview, overview } from '../src/sql/overview.js'
import { settleDown } from './lib/pg.js'

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    archived: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '50' },
    'per-row': { type: 'string', default: '25' },
    keep: { type: 'boolean', default: false },
    schema: { type: 'string' },
  },
})
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const reuse = values.schema !== undefined
const schema = values.schema ?? `overview_${Date.now().toString(36)}`
const t = `"${schema}"`
const pool = new pg.Pool({ connectionString: url, max: 2 })
const jobs = Number(values.jobs)
const queues = Array.from({ length: 8 }, (_, i) => `q${i}`)

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

async function seed(): Promise<void> {
  await migrate(fromPg(pool), schema)
  console.log(`seeding ${jobs} jobs, ${values.archived} archived rows (schema ${schema})`)
  // Per 20 jobs: 14 ready (priorities 0, 100, 200; due up to 1,000 s ago), 3 scheduled, 3 retrying.
  await pool.query(
    `INSERT INTO ${t}.jobs (queue, name, payload, priority, run_at, attempts)
     SELECT 'q' || (i % 8), 'noop', jsonb_build_object('i', i), (i % 3) * 100,
            CASE WHEN i % 20 < 14 THEN now() - (i % 1000) * interval '1 second' ELSE now() + interval '1 hour' END,
            CASE WHEN i % 20 >= 17 THEN 1 ELSE 0 END
     FROM generate_series(1, $1) i`,
    [jobs],
  )
  await pool.query(
    `INSERT INTO ${t}.jobs (queue, name, payload, run_at, lease_token, leased_by, attempts)
     SELECT 'q' || (i % 8), 'noop', '{}', now() + interval '5 minutes', gen_random_uuid(), 'inv-' || (i % 4), 1
     FROM generate_series(1, 400) i`,
  )
  await pool.query(
    `INSERT INTO ${t}.blocked (id, concurrency_key, queue, name, payload, priority, max_attempts, run_at)
     SELECT $1::bigint + i, 'k' || (i % 10), 'q' || (i % 8), 'noop', '{}', 16384, 5, now() FROM generate_series(1, 100) i`,
    [jobs + 1_000],
  )
  await pool.query(
    `INSERT INTO ${t}.archive (id, queue, name, payload, priority, attempts, max_attempts, status, enqueued_at, duration_ms, finished_at)
     SELECT 10000000 + i, 'q' || (i % 8), 'noop', '{}', 16384, 1, 5, 'completed', now() - interval '1 day', 3,
            now() - ($1 - i) * interval '10 ms'
     FROM generate_series(1, $1) i`,
    [Number(values.archived)],
  )
  // Attempt i finishes 60·i ms ago; a row holds the attempts of one (queue, status) among `perRow`
  // consecutive ones, as the settle of a batch of them writes it.
  const perRow = Number(values['per-row'])
  await pool.query(
    perRow === 1
      ? `INSERT INTO ${t}.job_stats (finished_at, name, queue, status, duration_ms, wait_ms)
         SELECT now() - i * interval '60 ms', 'noop', 'q' || (i % 8),
                CASE WHEN i % 50 = 0 THEN 'failed' WHEN i % 333 = 0 THEN 'dead' ELSE 'completed' END, 3, 10
         FROM generate_series(1, 60000) i`
      : `INSERT INTO ${t}.job_stats (finished_at, name, queue, status, jobs, durations, waits)
         SELECT now() - min(i) * interval '60 ms', 'noop', 'q' || (i % 8),
                CASE WHEN i % 50 = 0 THEN 'failed' WHEN i % 333 = 0 THEN 'dead' ELSE 'completed' END,
                count(*), array_agg(3::bigint), array_agg(10::bigint)
         FROM generate_series(1, 60000) i GROUP BY i / $1, 3, 4`,
    perRow === 1 ? [] : [perRow * 8],
  )
  await pool.query(
    `INSERT INTO ${t}.dead_letters (id, queue, name, payload, priority, attempts, max_attempts, enqueued_at, failed_at)
     SELECT 20000000 + i, 'q' || (i % 8), 'noop', '{}', 16384, 5, 5, now() - interval '2 days', now() - interval '1 day'
     FROM generate_series(1, 10000) i`,
  )
  await pool.query(
    `INSERT INTO ${t}.invocations (id, queues, expires_at, jobs_done)
     SELECT 'inv-' || i, ARRAY['q' || i], now() + interval '5 minutes', i * 10 FROM generate_series(0, 3) i`,
  )
  await settleDown(pool, schema)
}

try {
  if (!reuse) await seed()
  const statement = overview(t, schema, queues, OVERVIEW_LIMITS)
  const times: number[] = []
  let plan = ''
  for (let i = 0; i < Number(values.runs); i++) {
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
      [...statement.values],
    )
    plan = rows.map((r) => r['QUERY PLAN']).join('\n')
    times.push(Number(/Execution Time: ([0-9.]+) ms/.exec(plan)![1]))
  }
  const { rows } = await pool.query<Overview>(statement.text, [...statement.values])
  const answer = rows[0]!
  const sorted = [...times].sort((a, b) => a - b)
  console.log(plan)
  console.log('\nOne answer (queues):')
  console.table(answer.queues)
  console.log(
    `lastHour ${JSON.stringify(answer.lastHour)}, deadLetters ${JSON.stringify(answer.deadLetters)}`,
  )
  console.log(
    `\noverview at ${jobs} jobs + ${values.archived} archived, ${times.length} runs: server time p50 ${percentile(sorted, 50).toFixed(2)} ms, p95 ${percentile(sorted, 95).toFixed(2)} ms, max ${sorted[sorted.length - 1]!.toFixed(2)} ms`,
  )
} finally {
  if (!values.keep && !reuse) await pool.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
  await pool.end()
}
