/**
 * Prints EXPLAIN (ANALYZE, BUFFERS) of the claim statement at a large backlog, for
 * several batch sizes, inside transactions that are rolled back.
 *
 * With --partitions N (default 10,000), the same number of jobs again in queue `gov` under an
 * admission policy (concurrency 5, throttle, fair) spread over N partitions, the oldest tenth of
 * them in one partition whose bucket is empty: the claim's plans there show what admission reads.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/claim-plan.ts [--jobs 1000000] [--archived 1000000] [--partitions 10000]
 */

import { parseArgs } from 'node:util'
import pg from 'pg'
import { fromPg } from '../src/db/pg.js'
import { migrate } from '../src/migrate/run.js'
import { claim } from '../src/sql/claim.js'
import { settle } from '../src/sql/settle.js'
import { fillArchive } from './lib/archive.js'
import { explainNested } from './lib/pg.js'

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    archived: { type: 'string', default: '1000000' },
    queues: { type: 'string', default: '4' },
    keep: { type: 'boolean', default: false },
    partitions: { type: 'string', default: '10000' },
  },
})
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `claim_plan_${Date.now().toString(36)}`
const t = `"${schema}"`
const pool = new pg.Pool({ connectionString: url, max: 2 })
const jobs = Number(values.jobs)
const queues = Number(values.queues)

try {
  await migrate(fromPg(pool), schema)
  console.log(
    `backlog: ${jobs} ready jobs over ${queues} queues, ${values.archived} archived rows (schema ${schema})`,
  )
  await pool.query(
    `INSERT INTO ${t}.jobs (queue, name, payload, priority, run_at)
     SELECT 'q' || (i % $2), 'noop', jsonb_build_object('i', i), (i % 3) * 100, now() - (i % 1000) * interval '1 second'
     FROM generate_series(1, $1) i`,
    [jobs, queues],
  )
  // A slice of delayed and in-flight rows, as a live queue has.
  await pool.query(
    `INSERT INTO ${t}.jobs (queue, name, payload, run_at, lease_token, attempts)
     SELECT 'q0', 'noop', '{}', now() + interval '1 hour', CASE WHEN i % 2 = 0 THEN gen_random_uuid() END, i % 2
     FROM generate_series(1, $1) i`,
    [Math.floor(jobs / 20)],
  )
  await fillArchive(pool, t, { jobs: Number(values.archived), start: 0, queue: 'q0' })
  const partitions = Number(values.partitions)
  if (partitions > 0) {
    await pool.query(`INSERT INTO ${t}.policies (name, queue) VALUES ('governed', 'gov')`)
    // Partition p0 holds the oldest tenth of the backlog and has no tokens left.
    await pool.query(
      `INSERT INTO ${t}.partitions (policy, partition_key, queue, rate, per_ms, burst, tokens, refilled_at, max_in_flight, quantum)
       SELECT 'governed', 'p' || i, 'gov', 1000, 1000, 1000, CASE WHEN i = 0 THEN 0 ELSE 1000 END, now(), 5, 1
       FROM generate_series(0, $1 - 1) i`,
      [partitions],
    )
    await pool.query(`UPDATE ${t}.partitions SET rate = 0.001, per_ms = 3600000 WHERE partition_key = 'p0'`)
    await pool.query(
      `INSERT INTO ${t}.jobs (queue, name, payload, run_at, policy, partition_key)
       SELECT 'gov', 'governed', jsonb_build_object('i', i), now() - interval '1 day' + i * interval '1 ms', 'governed',
              CASE WHEN i <= $1 / 10 THEN 'p0' ELSE 'p' || (1 + i % ($2 - 1)) END
       FROM generate_series(1, $1) i`,
      [jobs, partitions],
    )
  }
  await pool.query(`VACUUM ANALYZE ${t}.jobs`)
  await pool.query(`VACUUM ANALYZE ${t}.archive`)
  await pool.query(`VACUUM ANALYZE ${t}.partitions`)

  const client = await pool.connect()
  // claim and settle are plpgsql functions: show the plans of the statements they run.
  const explain = async (
    label: string,
    statement: { text: string; values: readonly unknown[] },
  ): Promise<void> => {
    await client.query('BEGIN')
    const plans = await explainNested(client, statement.text, statement.values)
    await client.query('ROLLBACK')
    console.log(`\n=== ${label}`)
    console.log(plans)
  }
  for (const limit of [1, 10, 50, 100, 500, 1000]) {
    await explain(
      `claim LIMIT ${limit} from one queue`,
      claim(t, {
        queues: ['q1'],
        limit,
        leaseMs: 30_000,
        invocationId: 'plan',
        invocationPriority: 0,
        jobsDone: 0,
      }),
    )
  }
  await explain(
    'claim LIMIT 50 across all queues',
    claim(t, {
      queues: Array.from({ length: queues }, (_, i) => `q${i}`),
      limit: 50,
      leaseMs: 30_000,
      invocationId: 'plan',
      invocationPriority: 0,
      jobsDone: 0,
    }),
  )
  if (partitions > 0) {
    for (const limit of [1, 10, 50, 100, 500]) {
      await explain(
        `claim LIMIT ${limit} from queue gov (admission policy, ${partitions} partitions, the head one throttled)`,
        claim(t, {
          queues: ['gov'],
          limit,
          leaseMs: 30_000,
          invocationId: 'plan',
          invocationPriority: 0,
          jobsDone: 0,
        }),
      )
    }
  }
  const { rows: some } = await client.query(`SELECT id::text FROM ${t}.jobs WHERE queue = 'q1' LIMIT 50`)
  await explain(
    'settle 50 completions and finish',
    settle(t, {
      completions: some.map((r) => ({
        id: r.id as string,
        token: '00000000-0000-0000-0000-000000000000',
        status: 'completed' as const,
        durationMs: 1,
        waitMs: 0,
      })),
      failures: [],
      handBacks: [],
      finish: { invocationId: 'plan', queues: ['q1'] },
    }),
  )
  client.release()
} finally {
  if (!values.keep) await pool.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
  await pool.end()
}
