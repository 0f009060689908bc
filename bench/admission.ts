/**
 * Admission control's costs:
 *  1. the claim's latency (p50/p99 over many claims, each rolled back so the backlog stays the
 *     same) with a 1M-job backlog under one policy spread over 10 and over 10,000 active
 *     partitions (concurrency + throttle + fair), beside the same backlog as plain jobs;
 *  2. the throughput of a drain loop on a queue whose job has a concurrency + throttle + fair
 *     policy, as a ratio to the same queue with no policy, rounds alternating in the same run.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/admission.ts [--backlog 1000000] [--claims 300] [--jobs 20000] [--rounds 3]
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { fromPg } from '../src/db/pg.js'
import { createSluice } from '../src/index.js'
import { migrate } from '../src/migrate/run.js'
import { claim } from '../src/sql/claim.js'
import { governedJob, plainJob } from './lib/admission-jobs.js'

const { values } = parseArgs({
  options: {
    backlog: { type: 'string', default: '1000000' },
    claims: { type: 'string', default: '300' },
    jobs: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    batch: { type: 'string', default: '50' },
  },
})
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const pool = new pg.Pool({ connectionString: url, max: 4 })
const backlog = Number(values.backlog)
const claims = Number(values.claims)
const batch = Number(values.batch)

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

async function claimLatency(partitions: number | null): Promise<{ p50: number; p99: number; rows: number }> {
  const schema = `adm_bench_${Date.now().toString(36)}`
  const t = `"${schema}"`
  await migrate(fromPg(pool), schema)
  try {
    if (partitions === null) {
      await pool.query(
        `INSERT INTO ${t}.jobs (queue, name, payload, run_at)
         SELECT 'q', 'noop', jsonb_build_object('i', i), now() - (i % 1000) * interval '1 second'
         FROM generate_series(1, $1) i`,
        [backlog],
      )
    } else {
      await pool.query(`INSERT INTO ${t}.policies (name, queue) VALUES ('noop', 'q')`)
      await pool.query(
        `INSERT INTO ${t}.partitions (policy, partition_key, queue, rate, per_ms, burst, tokens, refilled_at, max_in_flight, quantum)
         SELECT 'noop', 'p' || i, 'q', 1000000, 1000, 1000000, 1000000, now(), 5, 1 FROM generate_series(1, $1) i`,
        [partitions],
      )
      await pool.query(
        `INSERT INTO ${t}.jobs (queue, name, payload, run_at, policy, partition_key)
         SELECT 'q', 'noop', jsonb_build_object('i', i), now() - (i % 1000) * interval '1 second', 'noop', 'p' || (1 + i % $2)
         FROM generate_series(1, $1) i`,
        [backlog, partitions],
      )
    }
    await pool.query(`VACUUM ANALYZE ${t}.jobs`)
    await pool.query(`VACUUM ANALYZE ${t}.partitions`)
    const client = await pool.connect()
    const times: number[] = []
    let rows = 0
    try {
      const statement = claim(t, {
        queues: ['q'],
        limit: batch,
        leaseMs: 30_000,
        invocationId: 'bench',
        invocationPriority: 0,
        jobsDone: 0,
      })
      for (let i = 0; i < claims + 20; i++) {
        await client.query('BEGIN')
        const start = process.hrtime.bigint()
        const r = await client.query(statement.text, statement.values as unknown[])
        const ms = Number(process.hrtime.bigint() - start) / 1e6
        await client.query('ROLLBACK')
        if (i >= 20) {
          times.push(ms)
          rows += r.rowCount ?? 0
        }
      }
    } finally {
      client.release()
    }
    times.sort((a, b) => a - b)
    return { p50: pct(times, 0.5), p99: pct(times, 0.99), rows: rows / claims }
  } finally {
    await pool.query(`DROP SCHEMA ${t} CASCADE`)
  }
}

async function throughput(): Promise<{ plain: number[]; policy: number[] }> {
  const plain = plainJob
  const governed = governedJob
  const jobs = Number(values.jobs)
  const result = { plain: [] as number[], policy: [] as number[] }
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [kind, job] of [
      ['plain', plain],
      ['policy', governed],
    ] as const) {
      const schema = `adm_tp_${Date.now().toString(36)}`
      const sluice = createSluice({
        database: url,
        schema,
        jobs: [job],
        drain: { budgetMs: 600_000, batchSize: batch, concurrency: batch },
      })
      try {
        await sluice.migrate()
        for (let i = 0; i < jobs; i += 5_000) {
          await sluice.enqueueMany(
            job,
            Array.from({ length: Math.min(5_000, jobs - i) }, (_, k) => ({ n: i + k })),
          )
        }
        // Statistics as autovacuum would have them on a live queue: a drain of never-analyzed
        // tables plans on guesses that no deployment keeps for long.
        await pool.query(`ANALYZE "${schema}".jobs, "${schema}".partitions`)
        const start = performance.now()
        let done = 0
        while (done < jobs) {
          const s = await sluice.drain()
          done += s.completed
          if (s.claimed === 0) break
        }
        const seconds = (performance.now() - start) / 1000
        if (done !== jobs) throw new Error(`${kind}: ${done} of ${jobs} jobs ran`)
        result[kind].push(jobs / seconds)
        console.log(`round ${round + 1} ${kind}: ${(jobs / seconds).toFixed(0)} jobs/s`)
      } finally {
        await pool.query(`DROP SCHEMA "${schema}" CASCADE`)
        await sluice.close()
      }
    }
  }
  return result
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

try {
  console.log(`claim latency, batch ${batch}, backlog ${backlog}, ${claims} claims each (rolled back):`)
  for (const partitions of [null, 10, 10_000] as const) {
    const r = await claimLatency(partitions)
    const label = partitions === null ? 'plain jobs (no policy)' : `${partitions} active partitions`
    console.log(
      `  ${label}: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, ${r.rows.toFixed(0)} rows per claim`,
    )
  }
  const tp = await throughput()
  const ratio = median(tp.policy) / median(tp.plain)
  console.log(
    `throughput (median of ${values.rounds}): plain ${median(tp.plain).toFixed(0)} jobs/s, ` +
      `concurrency+throttle+fair ${median(tp.policy).toFixed(0)} jobs/s, ratio ${ratio.toFixed(2)}×`,
  )
  // The target bench/README.md states for admission control.
  console.log(
    `target: policy throughput ≥ 0.7× plain: ${ratio >= 0.7 ? 'PASS' : 'MISS'} (${ratio.toFixed(2)}×)`,
  )
} finally {
  await pool.end()
}
