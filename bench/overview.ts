/**
 * The dashboard overview statement (inspect.overview()) at 1M jobs and 1M archived rows: server
 * time p50/p95 from EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) over 50 runs (no per-node clock reads,
 * which cost more than the statement on a busy machine), and the plan of the last run.
 *
 * Seeds a fresh schema with generate_series: 1M jobs over 8 queues (ready at 3 priorities,
 * scheduled, waiting for a retry, a few hundred running), a few blocked, 1M archive rows,
 * an hour of job_stats (1,000 finished attempts a minute, `--per-row` attempts to a row as one
 * settle of that many jobs of a name writes them; 1 for rows of the form before migration 0015),
 * 10,000 dead letters and a few live drains; then VACUUM ANALYZE, as autovacuum would leave the
 * tables.
 *
 * `--layout clustered` (the default) writes the jobs as enqueueMany in chunks of 1,000 does when
 * queues are loaded one after another: each queue's rows, and each chunk's state, share pages —
 * queues of 30, 20, 15, 10, 10, 8 and 7 % of the jobs and one of 5 jobs. `--layout interleaved`
 * deals the rows out to 8 queues one by one (the best case for a block sample). Every run's
 * answer is compared with the exact counts: per queue and state, the true count, the range of
 * the estimates, their mean stated margin, how often the margin held the truth and the largest
 * error.
 *
 * `--exact-pages 0` takes the large table's path on a small one (at 100k jobs the table is counted).
 *
 *   DATABASE_URL=postgres://… npx tsx bench/overview.ts [--jobs 1000000] [--archived 1000000] [--runs 50] [--per-row 25] [--layout clustered|interleaved] [--exact-pages N] [--keep]
 *
 * `--keep` leaves the schema; `--schema <name>` measures one seeded before (and kept) again.
 */

import { parseArgs } from 'node:util'
import pg from 'pg'
import { fromPg } from '../src/db/pg.js'
import { migrate } from '../src/migrate/run.js'
import { OVERVIEW_LIMITS, type Overview, overview } from '../src/sql/overview.js'
import { fillArchive } from './lib/archive.js'
import { settleDown } from './lib/pg.js'

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    archived: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '50' },
    'per-row': { type: 'string', default: '25' },
    keep: { type: 'boolean', default: false },
    schema: { type: 'string' },
    layout: { type: 'string', default: 'clustered' },
    'exact-pages': { type: 'string' },
  },
})
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const reuse = values.schema !== undefined
const schema = values.schema ?? `overview_${Date.now().toString(36)}`
const t = `"${schema}"`
const pool = new pg.Pool({ connectionString: url, max: 2 })
const jobs = Number(values.jobs)
const queues = Array.from({ length: 8 }, (_, i) => `q${i}`)
if (values.layout !== 'clustered' && values.layout !== 'interleaved')
  throw new Error('--layout clustered|interleaved')
const clustered = values.layout === 'clustered'

const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

async function seed(): Promise<void> {
  await migrate(fromPg(pool), schema)
  console.log(`seeding ${jobs} jobs, ${values.archived} archived rows (schema ${schema})`)
  if (clustered) {
    // Queue by queue in chunks of 1,000 (as enqueueMany writes them), each chunk one state and
    // priority: of every 20 chunks 14 ready, 3 scheduled, 3 waiting for a retry. Then q7: 5 jobs.
    await pool.query(
      `INSERT INTO ${t}.jobs (queue, name, payload, priority, run_at, attempts)
       SELECT 'q' || width_bucket(i::float8 / $1, ARRAY[0, 0.3, 0.5, 0.65, 0.75, 0.85, 0.93]) - 1, 'noop',
              jsonb_build_object('i', i), ((i / 1000) % 3) * 100,
              CASE WHEN (i / 1000) % 20 < 14 THEN now() - (i % 1000) * interval '1 second' ELSE now() + interval '1 hour' END,
              CASE WHEN (i / 1000) % 20 >= 17 THEN 1 ELSE 0 END
       FROM generate_series(0, $1 - 6) i ORDER BY i`,
      [jobs],
    )
    await pool.query(
      `INSERT INTO ${t}.jobs (queue, name, payload, run_at) SELECT 'q7', 'noop', '{}', now() - interval '6 seconds'
       FROM generate_series(1, 5)`,
    )
  } else {
    // Per 20 jobs: 14 ready (priorities 0, 100, 200; due up to 1,000 s ago), 3 scheduled, 3 retrying.
    await pool.query(
      `INSERT INTO ${t}.jobs (queue, name, payload, priority, run_at, attempts)
       SELECT 'q' || (i % 8), 'noop', jsonb_build_object('i', i), (i % 3) * 100,
              CASE WHEN i % 20 < 14 THEN now() - (i % 1000) * interval '1 second' ELSE now() + interval '1 hour' END,
              CASE WHEN i % 20 >= 17 THEN 1 ELSE 0 END
       FROM generate_series(1, $1) i`,
      [jobs],
    )
  }
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
  await fillArchive(pool, t, { jobs: Number(values.archived), start: 10_000_000, queues: 8 })
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

type State = 'ready' | 'scheduled' | 'retrying'
const STATES: State[] = ['ready', 'scheduled', 'retrying']

/** The exact counts, by a full scan (what the overview avoids). */
async function exactCounts(): Promise<Map<string, Record<State, number>>> {
  const { rows } = await pool.query<{ queue: string } & Record<State, string>>(
    `SELECT queue, count(*) FILTER (WHERE run_at <= now() AND attempts < max_attempts) AS ready,
            count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts = 0) AS scheduled,
            count(*) FILTER (WHERE run_at > now() AND lease_token IS NULL AND attempts > 0) AS retrying
     FROM ${t}.jobs GROUP BY queue`,
  )
  return new Map(
    rows.map((r) => [r.queue, { ready: +r.ready, scheduled: +r.scheduled, retrying: +r.retrying }]),
  )
}

interface Tally {
  exact: number
  estimated: number
  bounded: number
  covered: number
  min: number
  max: number
  marginSum: number
  worst: number
}

try {
  if (!reuse) await seed()
  const limits =
    values['exact-pages'] === undefined
      ? OVERVIEW_LIMITS
      : { ...OVERVIEW_LIMITS, exactPages: Number(values['exact-pages']) }
  const statement = overview(t, schema, queues, limits)
  const truth = await exactCounts()
  const tallies = new Map<string, Tally>()
  const times: number[] = []
  let plan = ''
  let answer: Overview | undefined
  for (let i = 0; i < Number(values.runs); i++) {
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) ${statement.text}`,
      [...statement.values],
    )
    plan = rows.map((r) => r['QUERY PLAN']).join('\n')
    times.push(Number(/Execution Time: ([0-9.]+) ms/.exec(plan)![1]))
    answer = (await pool.query<Overview>(statement.text, [...statement.values])).rows[0]!
    for (const q of answer.queues) {
      for (const state of STATES) {
        const key = `${q.queue} ${state}`
        const actual = truth.get(q.queue)?.[state] ?? 0
        const tally = tallies.get(key) ?? {
          exact: 0,
          estimated: 0,
          bounded: 0,
          covered: 0,
          min: Infinity,
          max: -Infinity,
          marginSum: 0,
          worst: 0,
        }
        const margin = q.margin[state]
        if (margin === 0) tally.exact++
        else tally.estimated++
        if (margin !== null && margin > 0) {
          tally.bounded++
          tally.marginSum += margin
          if (Math.abs(q[state] - actual) <= margin) tally.covered++
        }
        tally.min = Math.min(tally.min, q[state])
        tally.max = Math.max(tally.max, q[state])
        tally.worst = Math.max(tally.worst, Math.abs(q[state] - actual))
        tallies.set(key, tally)
      }
    }
  }
  const sorted = [...times].sort((a, b) => a - b)
  console.log(plan)
  console.log('\nOne answer (queues):')
  console.table(answer!.queues.map(({ margin, ...q }) => ({ ...q, margin: JSON.stringify(margin) })))
  console.log(
    `lastHour ${JSON.stringify(answer!.lastHour)}, deadLetters ${JSON.stringify(answer!.deadLetters)}`,
  )
  console.log(`\nError against the exact counts, ${times.length} runs (${values.layout}):`)
  console.table(
    [...tallies].map(([key, x]) => {
      const [queue, state] = key.split(' ') as [string, State]
      const actual = truth.get(queue)?.[state] ?? 0
      return {
        queue,
        state,
        true: actual,
        shown: x.min === x.max ? String(x.min) : `${x.min}..${x.max}`,
        exact: x.exact,
        estimated: x.estimated,
        'mean margin': x.bounded ? Math.round(x.marginSum / x.bounded) : '',
        'margin held': x.bounded ? `${x.covered}/${x.bounded}` : '',
        'worst error': x.worst,
        'worst %': actual ? `${((100 * x.worst) / actual).toFixed(1)} %` : '',
      }
    }),
  )
  console.log(
    `\noverview at ${jobs} jobs (${values.layout}) + ${values.archived} archived, ${times.length} runs: server time p50 ${percentile(sorted, 50).toFixed(2)} ms, p95 ${percentile(sorted, 95).toFixed(2)} ms, max ${sorted[sorted.length - 1]!.toFixed(2)} ms`,
  )
} finally {
  if (!values.keep && !reuse) await pool.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
  await pool.end()
}
