/**
 * No stall: a partition that may admit nothing (out of tokens) with a huge backlog at the head
 * of the queue costs a drain for other partitions and plain jobs nothing: each of the drain's
 * statements, nested ones included, reads a bounded number of rows, whatever the backlog. The
 * plans come from auto_explain on the drain's own connection.
 */
import pg from 'pg'
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob, fromPg, type Sluice } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
let explained: { sluice: Sluice; pool: pg.Pool } | undefined
afterEach(async () => {
  await explained?.sluice.close()
  await explained?.pool.end()
  explained = undefined
  await env?.cleanup()
  env = undefined
})

const BACKLOG = 100_000

/**
 * A Sluice on one connection that sends back the plan of every statement it runs, nested
 * statements of the SQL functions included (auto_explain at notice level), into `plans`.
 */
function explainedSluice(schema: string, jobs: Parameters<typeof createSluice>[0]['jobs']) {
  const plans: string[] = []
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 })
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('notice', (notice) => {
      if (notice.message?.includes('plan:')) plans.push(notice.message)
    })
    void client.query(`LOAD 'auto_explain';
      SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on;
      SET auto_explain.log_buffers = on; SET auto_explain.log_timing = off;
      SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice`)
  })
  const sluice = createSluice({ database: fromPg(pool), schema, jobs })
  explained = { sluice, pool }
  return { sluice, plans }
}

/** Buffers a plan's top node touched (its children's included): hit plus read. */
function buffersOf(plan: string): number {
  const line = plan.split('\n').find((l) => /Buffers: shared/.test(l))
  if (!line) return 0
  return [...line.matchAll(/\b(hit|read)=(\d+)/g)].reduce((sum, m) => sum + Number(m[2]), 0)
}

/** Rows a plan's nodes produced (rows × loops) plus those their filters removed. */
function rowsTouched(plan: string): number {
  let total = 0
  for (const m of plan.matchAll(/rows=(\d+) loops=(\d+)/g)) total += Number(m[1]) * Number(m[2])
  for (const m of plan.matchAll(/Rows Removed by (?:Filter|Join Filter|Index Recheck): (\d+)/g))
    total += Number(m[1])
  return total
}

test('a partition out of tokens with 100,000 jobs at the head of the queue: a drain of other partitions and plain jobs reads a bounded number of rows', async () => {
  const throttled = defineJob({
    name: 'throttled',
    input: z.object({ p: z.string() }),
    priority: 0,
    // T: one token an hour; U: plenty.
    admission: {
      partition: (i) => i.p,
      throttle: { rate: (i) => (i.p === 'T' ? 1 : 1_000), per: 3_600_000 },
    },
    run: () => {},
  })
  const plain = defineJob({ name: 'plain', input: z.object({}), run: () => {} })
  const warmUp = defineJob({ name: 'warm-up', queue: 'warm-up', input: z.object({}), run: () => {} })
  const jobs = [throttled, plain, warmUp]
  env = await makeSluice({ jobs })
  // T's row comes from an enqueue; its bucket is then emptied.
  await env.sluice.enqueue(throttled, { p: 'T' })
  await env.sql(`UPDATE $schema.partitions SET tokens = 0, refilled_at = now() WHERE partition_key = 'T'`)
  // T's backlog: one statement, due an hour ago and of the highest priority, ahead of everything.
  await env.sql(
    `INSERT INTO $schema.jobs (queue, name, payload, priority, run_at, enqueued_at, policy, partition_key)
     SELECT 'default', 'throttled', '{"p":"T"}', 0, now() - interval '1 hour', now() - interval '1 hour', 'throttled', 'T'
     FROM generate_series(1, $1::int)`,
    [BACKLOG],
  )
  // Statistics taken while the backlog was all there was (as autovacuum takes them after a bulk
  // insert): the planner believes every job is T's, the case where a plan that reads the whole
  // table looks cheapest.
  await env.sql(`ANALYZE $schema.jobs`)
  await env.sluice.enqueueMany(
    throttled,
    Array.from({ length: 5 }, () => ({ p: 'U' })),
  )
  await env.sluice.enqueueMany(
    plain,
    Array.from({ length: 5 }, () => ({})),
  )

  const { sluice, plans } = explainedSluice(env.schema, jobs)
  // A first drain of another queue plans every statement once on this connection (catalog reads
  // would otherwise count in the buffers of the statements that call functions).
  await env.sluice.enqueue(warmUp, {})
  expect(await sluice.drain({ queues: ['warm-up'] })).toMatchObject({ completed: 1 })
  plans.length = 0

  const started = performance.now()
  const summary = await sluice.drain({ queues: ['default'] })
  const ms = performance.now() - started
  console.info(
    `drain beside a backlog of ${BACKLOG} out of tokens: ${ms.toFixed(0)} ms, ${plans.length} plans\n${plans.join('\n\n')}`,
  )
  // It ran U's jobs and the plain ones, and none of T's.
  expect(summary).toMatchObject({ claimed: 10, completed: 10 })
  expect(await env.sql(`SELECT partition_key, count(*)::int AS n FROM $schema.jobs GROUP BY 1`)).toEqual([
    { partition_key: 'T', n: BACKLOG + 1 },
  ])
  expect(plans.some((p) => p.includes('admission_room'))).toBe(true)
  // Every statement, the claim and the end-of-drain count of ready jobs with theirs, read a few
  // dozen rows and pages; reading T's backlog would be 100,000 rows and some 1,600 pages.
  const worst = plans
    .map((plan) => ({ rows: rowsTouched(plan), buffers: buffersOf(plan), plan }))
    .sort((a, b) => b.rows - a.rows)
  console.info(
    `most rows read by one statement: ${worst[0]!.rows}; most buffers: ${Math.max(...worst.map((w) => w.buffers))}`,
  )
  for (const w of worst) {
    const what = w.plan.split('\n').slice(0, 3).join(' ')
    expect(w.rows, what).toBeLessThan(1_000)
    // A statement that calls one of the functions (a Function Scan) counts in its buffers its
    // nested statements', each checked here on its own, and the catalog pages the backend reads
    // to plan them: after a reset of its caches (other sessions' DDL overflowing the invalidation
    // queue, as parallel test files do), over a thousand. Only its rows count here.
    if (!/Function Scan on (?!unnest\b|generate_series\b|jsonb?_)\w+/.test(w.plan))
      expect(w.buffers, what).toBeLessThan(1_000)
  }
}, 60_000)
