import { spawnSync } from 'node:child_process'
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { databaseUrl, endLeasesSql, makeSluice, perTestConnections, type TestSluice } from '../helpers/db.js'
import { drainAll, OverlapRecorder, sleep } from '../helpers/overlap.js'

let env: TestSluice | undefined
const { connections, closeAll } = perTestConnections(() => env!.schema)
afterEach(async () => {
  await closeAll()
  await env?.cleanup()
  env = undefined
})

const breakerUntil = async (e: TestSluice): Promise<number | null> => {
  const [row] = await e.sql<{ ms: number | null }>(
    `SELECT (extract(epoch FROM breaker_until - now()) * 1000)::float8 AS ms FROM $schema.queues WHERE name = 'flaky'`,
  )
  return row!.ms
}

test('circuit breaker: trips, pauses, resumes, doubles its backoff, caps it, resets after a success', async () => {
  let fail = true
  const job = defineJob({
    name: 'call-partner',
    queue: 'flaky',
    input: z.object({ n: z.number() }),
    retry: { maxAttempts: 100, baseDelayMs: 0, jitter: 0 },
    run: () => {
      if (fail) throw new Error('partner down')
    },
  })
  env = await makeSluice({ jobs: [job], circuitBreaker: { threshold: 3, baseMs: 10_000, capMs: 25_000 } })
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: 3 }, (_, n) => ({ n })),
  )
  const reopen = () => env!.sql(`UPDATE $schema.queues SET breaker_until = now() - interval '1 ms'`)

  // Trip 1: three consecutive failures pause the queue for 10 s.
  expect(await env.sluice.drain({ concurrency: 1 })).toMatchObject({ failed: 3 })
  const first = await breakerUntil(env)
  expect(first).toBeGreaterThan(9_000)
  expect(first).toBeLessThanOrEqual(10_000)
  expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })

  // Trip 2 doubles to 20 s; trip 3 would be 40 s but is capped at 25 s.
  await reopen()
  expect(await env.sluice.drain({ concurrency: 1 })).toMatchObject({ failed: 3 })
  expect(await breakerUntil(env)).toBeGreaterThan(19_000)
  await reopen()
  expect(await env.sluice.drain({ concurrency: 1 })).toMatchObject({ failed: 3 })
  const capped = await breakerUntil(env)
  expect(capped).toBeGreaterThan(24_000)
  expect(capped).toBeLessThanOrEqual(25_000)

  // A success resets the count and the trips.
  await reopen()
  fail = false
  expect(await env.sluice.drain()).toMatchObject({ completed: 3 })
  expect(
    await env.sql(`SELECT consecutive_failures, trips FROM $schema.queues WHERE name = 'flaky'`),
  ).toEqual([{ consecutive_failures: 0, trips: 0 }])
})

test("runs the drain's deadline stops do not trip the breaker; their attempts count", async () => {
  const slow = defineJob({
    name: 'too-long',
    queue: 'flaky',
    input: z.object({ n: z.number() }),
    retry: { maxAttempts: 3, baseDelayMs: 0, jitter: 0 },
    // Longer than the drain's budget, as a 20 s job in a 10 s function.
    run: (_input, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', resolve)),
  })
  const quick = defineJob({ name: 'quick', queue: 'flaky', input: z.object({}), run: () => {} })
  env = await makeSluice({ jobs: [slow, quick], circuitBreaker: { threshold: 3, baseMs: 10_000 } })
  await env.sluice.enqueueMany(
    slow,
    Array.from({ length: 4 }, (_, n) => ({ n })),
  )
  const stopped = await env.sluice.drain({ budgetMs: 400, concurrency: 4 })
  expect(stopped).toMatchObject({ failed: 4, retried: 4 })
  const [row] = await env.sql<{ attempts: number; code: string }>(
    `SELECT attempts, last_error->>'code' AS code FROM $schema.jobs WHERE name = 'too-long' LIMIT 1`,
  )
  expect(row).toEqual({ attempts: 1, code: 'DRAIN_DEADLINE' })
  // Four failed attempts over a threshold of three, and the queue is not paused: the next job runs.
  expect(await breakerUntil(env)).toBeNull()
  await env.sql(`DELETE FROM $schema.jobs WHERE name = 'too-long'`)
  await env.sluice.enqueue(quick, {})
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
})

test('a manual pause survives the breaker and everything else until resume', async () => {
  const job = defineJob({ name: 'paused-job', queue: 'held', input: z.object({}), run: () => {} })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueue(job, {})
  await env.sluice.pause('held')
  expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
  // Maintenance (settings sync included) and a breaker reset leave the pause alone.
  await env.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
  await env.sluice.maintain()
  await env.sluice.migrate()
  await env.sql(`UPDATE $schema.queues SET breaker_until = NULL, consecutive_failures = 0`)
  expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
  expect((await env.sluice.queueStates()).find((q) => q.name === 'held')).toMatchObject({ paused: true })
  expect(await env.sluice.resume('held')).toBe(true)
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  await expect(env.sluice.pause("held'; --")).rejects.toMatchObject({ code: 'INVALID_NAME' })
})

test('single active consumer: two concurrent drains process an ordered queue strictly in order', async () => {
  const order: number[] = []
  const recorder = new OverlapRecorder()
  const job = defineJob({
    name: 'ledger-entry',
    queue: 'ledger',
    input: z.object({ n: z.number() }),
    retry: { maxAttempts: 3, baseDelayMs: 10, jitter: 0 },
    run: async (input, ctx) =>
      recorder.track(`${input.n}:${ctx.attempt}`, async () => {
        // Entry 5 fails once: order must hold across its retry.
        if (input.n === 5 && ctx.attempt === 1) throw new Error('transient')
        order.push(input.n)
        await sleep(1)
      }),
  })
  const options = { jobs: [job], queues: { ledger: { singleActiveConsumer: true } } }
  env = await makeSluice(options)
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: 60 }, (_, n) => ({ n })),
  )
  expect(await drainAll(connections(options, 2), { concurrency: 8, batchSize: 10 }, { total: 60 })).toBe(60)
  expect(order).toEqual(Array.from({ length: 60 }, (_, n) => n))
  expect(recorder.max).toBe(1)
})

test('single active consumer: a failed job holds its own queue, and the drain goes on with the others', async () => {
  const ledger = defineJob({
    name: 'ledger-entry',
    queue: 'ledger',
    input: z.object({ n: z.number() }),
    retry: { maxAttempts: 3, baseDelayMs: 60_000, jitter: 0 },
    run: (input) => {
      if (input.n === 1) throw new Error('transient')
    },
  })
  const plain = defineJob({
    name: 'plain',
    queue: 'default',
    input: z.object({ n: z.number() }),
    run: () => {},
  })
  env = await makeSluice({ jobs: [ledger, plain], queues: { ledger: { singleActiveConsumer: true } } })
  await env.sluice.enqueueMany(
    ledger,
    Array.from({ length: 3 }, (_, n) => ({ n })),
  )
  // Later than the ledger's jobs: the first claim takes the ledger's and a few of these.
  await env.sluice.enqueueMany(
    plain,
    Array.from({ length: 40 }, (_, n) => ({ n })),
    { runAt: new Date(Date.now() + 50) },
  )
  await expect
    .poll(async () => (await env!.sql(`SELECT 1 FROM $schema.jobs WHERE run_at > now()`)).length)
    .toBe(0)
  const summary = await env.sluice.drain({ queues: ['ledger', 'default'], batchSize: 5, concurrency: 1 })
  // Entry 0 ran, entry 1 failed and holds the ledger (entry 2 waits behind it); every plain job ran.
  expect(summary).toMatchObject({ completed: 41, failed: 1, stoppedBy: 'empty' })
  expect(await env.sql(`SELECT payload->>'n' AS n FROM $schema.jobs ORDER BY id`)).toEqual([
    { n: '1' },
    { n: '2' },
  ])
})

test('single active consumer: when the holder dies, another drain takes over after the lease', async () => {
  const job = defineJob({ name: 'ordered', queue: 'sac', input: z.object({ n: z.number() }), run: () => {} })
  const options = { jobs: [job], queues: { sac: { singleActiveConsumer: true } } }
  env = await makeSluice(options)
  await env.sluice.enqueueMany(job, [{ n: 1 }, { n: 2 }])
  // A drain takes the queue's lease (and the jobs) and is killed.
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `
      import pg from 'pg'
      const c = new pg.Client({ connectionString: process.env.DATABASE_URL }); await c.connect()
      await c.query(\`SELECT * FROM "${env.schema}".claim(ARRAY['sac'], 10, 60000, 'doomed', 0, 0)\`)
      process.kill(process.pid, 'SIGKILL')`,
    ],
    { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8', input: '' },
  )
  expect(child.signal).toBe('SIGKILL')
  expect(await env.sql(`SELECT holder FROM $schema.queue_leases`)).toEqual([{ holder: 'doomed' }])
  expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
  await env.sql(`UPDATE $schema.queue_leases SET expires_at = now() - interval '1 ms'`)
  await env.sql(endLeasesSql('$schema'))
  expect(await env.sluice.drain()).toMatchObject({ completed: 2 })
})

/**
 * A single-consumer queue of `total` jobs (`n` 0, 1, …) whose holder took the first `taken` of them
 * and died: its queue lease and their leases have run out. Returns the order the jobs run in.
 */
async function deadHolder(total: number, taken: number, maxAttempts = 25): Promise<number[]> {
  const order: number[] = []
  const job = defineJob({
    name: 'ordered',
    queue: 'sac',
    input: z.object({ n: z.number() }),
    retry: { maxAttempts },
    run: ({ n }) => {
      order.push(n)
    },
  })
  env = await makeSluice({ jobs: [job], queues: { sac: { singleActiveConsumer: true } } })
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: total }, (_, n) => ({ n })),
  )
  await env.sql(`SELECT * FROM $schema.claim(ARRAY['sac'], ${taken}, 60000, 'doomed', 0, 0)`)
  await env.sql(`UPDATE $schema.queue_leases SET expires_at = now() - interval '1 ms'`)
  await env.sql(endLeasesSql('$schema'))
  return order
}

test('single active consumer: the jobs a dead holder had leased keep their place, ahead of the jobs after them', async () => {
  const order = await deadHolder(10, 5)
  expect(await env!.sluice.drain()).toMatchObject({ completed: 10, stoppedBy: 'empty' })
  expect(order).toEqual(Array.from({ length: 10 }, (_, n) => n))
  // Their attempts count: each may have run in the drain that died.
  const attempts = await env!.sql<{ attempts: number }>(
    `SELECT attempts FROM $schema.archive WHERE (payload->>'n')::int < 5`,
  )
  expect(attempts.map((r) => r.attempts)).toEqual([2, 2, 2, 2, 2])
})

test("single active consumer: a dead holder's job with no attempt left is dead-lettered, not put back in place", async () => {
  const order = await deadHolder(3, 1, 1)
  expect(await env!.sluice.drain()).toMatchObject({ completed: 2 })
  expect(order).toEqual([1, 2])
  await env!.sluice.maintain()
  const dead = await env!.sql<{ n: number }>(`SELECT (payload->>'n')::int AS n FROM $schema.dead_letters`)
  expect(dead).toEqual([{ n: 0 }])
  expect(await env!.sql(`SELECT id FROM $schema.jobs`)).toEqual([])
})

test('single active consumer: a job of steps that sleeps gives up its place until it wakes; the jobs after it run', async () => {
  const order: string[] = []
  const job = defineJob({
    name: 'ordered',
    queue: 'sac',
    input: z.object({ n: z.number() }),
    run: async ({ n }, ctx) => {
      order.push(`start ${n}`)
      if (n === 0) {
        await ctx.step('before', () => 1)
        await ctx.sleep('a while', '1h')
      }
      order.push(`end ${n}`)
    },
  })
  env = await makeSluice({ jobs: [job], queues: { sac: { singleActiveConsumer: true } } })
  await env.sluice.enqueueMany(job, [{ n: 0 }, { n: 1 }, { n: 2 }])
  expect(await env.sluice.drain({ concurrency: 1 })).toMatchObject({ completed: 2, stoppedBy: 'empty' })
  // The sleep ended job 0's run; the queue went on with the jobs after it.
  expect(order).toEqual(['start 0', 'start 1', 'end 1', 'start 2', 'end 2'])
  // An hour later (the sleep's end moved to now), it runs again ahead of a job enqueued after it woke.
  await env.sql(`UPDATE $schema.job_steps SET wake_at = now() - interval '1 ms' WHERE wake_at IS NOT NULL`)
  await env.sql(`UPDATE $schema.jobs SET run_at = now() - interval '1 ms'`)
  await env.sluice.enqueue(job, { n: 3 })
  expect(await env.sluice.drain({ concurrency: 1 })).toMatchObject({ completed: 2, stoppedBy: 'empty' })
  expect(order.slice(5)).toEqual(['start 0', 'end 0', 'start 3', 'end 3'])
})

test('consumer priority: a lower-priority drain skips a queue a higher-priority one is serving', async () => {
  const job = defineJob({ name: 'prio', queue: 'shared', input: z.object({}), run: () => {} })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueueMany(job, [{}, {}])
  await env.sql(
    `INSERT INTO $schema.invocations (id, queues, priority, expires_at) VALUES ('vip', ARRAY['shared'], 10, now() + interval '1 minute')`,
  )
  expect(await env.sluice.drain({ priority: 0 })).toMatchObject({ claimed: 0 })
  expect(await env.sluice.drain({ priority: 10 })).toMatchObject({ completed: 2 })
  await env.sluice.enqueue(job, {})
  // Once the high-priority drain's lease goes stale, the others resume.
  await env.sql(`UPDATE $schema.invocations SET expires_at = now() - interval '1 ms' WHERE id = 'vip'`)
  expect(await env.sluice.drain({ priority: 0 })).toMatchObject({ completed: 1 })
})

test('flow control: a global cap bounds the jobs leased at once across drains', async () => {
  const recorder = new OverlapRecorder()
  const job = defineJob({
    name: 'capped',
    queue: 'partner-api',
    input: z.object({ n: z.number() }),
    run: (input) => recorder.track(String(input.n), () => sleep(5)),
  })
  const options = { jobs: [job], queues: { 'partner-api': { globalConcurrency: 2 } } }
  env = await makeSluice(options)
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: 40 }, (_, n) => ({ n })),
  )
  expect(await drainAll(connections(options, 4), { concurrency: 10 }, { total: 40 })).toBe(40)
  expect(recorder.max).toBeLessThanOrEqual(2)
  expect(recorder.max).toBeGreaterThan(0)
})
