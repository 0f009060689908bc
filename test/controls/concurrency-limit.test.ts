import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { ConflictError, defineJob } from '../../src/index.js'
import { endLeasesSql, makeSluice, perTestConnections, type TestSluice } from '../helpers/db.js'
import { drainAll, OverlapRecorder, sleep } from '../helpers/overlap.js'

let env: TestSluice | undefined
const { connections, closeAll } = perTestConnections(() => env!.schema)
afterEach(async () => {
  await closeAll()
  await env?.cleanup()
  env = undefined
})

test('limit 3, 8 concurrent drains, 200 jobs on one key: at most 3 at once, all run, promoted in order', async () => {
  const recorder = new OverlapRecorder()
  const job = defineJob({
    name: 'charge-customer',
    input: z.object({ customer: z.string(), n: z.number() }),
    concurrency: { limit: 3, key: (i) => `customer:${i.customer}` },
    run: (input) => recorder.track(String(input.n), () => sleep(2)),
  })
  env = await makeSluice({ jobs: [job] })
  const results = await env.sluice.enqueueMany(
    job,
    Array.from({ length: 200 }, (_, n) => ({ customer: 'c1', n })),
  )
  expect(results.filter((r) => r.status === 'enqueued')).toHaveLength(3)
  expect(results.filter((r) => r.status === 'blocked')).toHaveLength(197)

  const drains = connections({ jobs: [job] }, 8)
  expect(await drainAll(drains, { concurrency: 5 }, { total: 200 })).toBe(200)
  expect(recorder.max).toBe(3)
  expect(new Set(recorder.starts.map((s) => s.key)).size).toBe(200)
  // Blocked jobs enter the queue in arrival order as slots free: job n can only start after
  // job n-3 has finished.
  const started = new Map(recorder.starts.map((s) => [Number(s.key), s.at]))
  for (let n = 3; n < 200; n++) {
    expect(started.get(n)!).toBeGreaterThanOrEqual(recorder.ends.get(String(n - 3))!)
  }
  expect(await env.sql(`SELECT value FROM $schema.semaphores`)).toEqual([{ value: 0 }])
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.blocked`)).toEqual([{ n: 0 }])
}, 120_000)

test('discard and raise at the limit write nothing', async () => {
  const discard = defineJob({
    name: 'discarding',
    input: z.object({}),
    concurrency: { limit: 1, key: () => 'k1', onConflict: 'discard' },
    run: () => {},
  })
  const raise = defineJob({
    name: 'raising',
    input: z.object({}),
    concurrency: { limit: 1, key: () => 'k2', onConflict: 'raise' },
    run: () => {},
  })
  env = await makeSluice({ jobs: [discard, raise] })
  expect(await env.sluice.enqueue(discard, {})).toMatchObject({ status: 'enqueued' })
  expect(await env.sluice.enqueue(discard, {})).toEqual({ id: null, status: 'discarded' })
  expect(await env.sluice.enqueue(raise, {})).toMatchObject({ status: 'enqueued' })
  await expect(env.sluice.enqueue(raise, {})).rejects.toBeInstanceOf(ConflictError)
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 2 }])
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.blocked`)).toEqual([{ n: 0 }])
})

test('a drain that dies holding a slot: the job is re-delivered after its lease and the next one promoted', async () => {
  const ran: number[] = []
  const job = defineJob({
    name: 'one-at-a-time',
    input: z.object({ n: z.number() }),
    concurrency: { limit: 1, key: () => 'solo' },
    run: (input) => void ran.push(input.n),
  })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueueMany(job, [{ n: 1 }, { n: 2 }])
  // A drain claims job 1 and dies.
  await env.sql(`SELECT * FROM $schema.claim(ARRAY['default'], 10, 60000, 'dead-drain', 0, 0)`)
  expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
  // Its lease runs out; maintenance reaps the invocation; the job runs again and frees the slot.
  await env.sql(endLeasesSql('$schema'))
  await env.sql(`UPDATE $schema.invocations SET expires_at = now() - interval '1 ms'`)
  await env.sluice.maintain()
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(ran).toEqual([1, 2])
})

test('a leaked slot is recovered when its TTL passes, and the blocked job promoted', async () => {
  const job = defineJob({
    name: 'leaky',
    input: z.object({ n: z.number() }),
    concurrency: { limit: 1, key: () => 'leak', ttl: 60_000 },
    run: () => {},
  })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueueMany(job, [{ n: 1 }, { n: 2 }])
  // Someone deletes the running job by hand: its slot would leak.
  await env.sql(`DELETE FROM $schema.jobs`)
  expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
  await env.sql(`UPDATE $schema.semaphores SET expires_at = now() - interval '1 ms'`)
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'reconcile-semaphores')?.rows).toBe(1)
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
})

test('a replayed dead letter goes through its limit again (and keeps its id and history)', async () => {
  const ran: string[] = []
  let fail = true
  const job = defineJob({
    name: 'limited-replay',
    input: z.object({ n: z.string() }),
    concurrency: { limit: 1, key: () => 'replay' },
    retry: 1,
    run: (input) => {
      if (fail && input.n === 'a') throw new Error('a fails once')
      ran.push(input.n)
    },
  })
  env = await makeSluice({ jobs: [job] })
  const { id: a } = await env.sluice.enqueue(job, { n: 'a' })
  expect(await env.sluice.drain()).toMatchObject({ deadLettered: 1 })
  fail = false
  await env.sluice.enqueue(job, { n: 'b' })
  // b holds the only slot: the replayed a waits, blocked, and keeps its id.
  expect(await env.sluice.deadLetters.retry(a!)).toEqual({ requeued: [a], kept: [] })
  expect(await env.sql(`SELECT id::text FROM $schema.blocked`)).toEqual([{ id: a }])
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(ran).toEqual(['b', 'a'])
})

test('a replayed dead letter whose concurrency key is full, and does not block, stays a dead letter', async () => {
  let fail = true
  const job = defineJob({
    name: 'limited-discard',
    input: z.object({ n: z.string() }),
    concurrency: { limit: 1, key: () => 'replay', onConflict: 'discard' },
    retry: 1,
    run: (input) => {
      if (fail && input.n === 'a') throw new Error('a fails once')
    },
  })
  env = await makeSluice({ jobs: [job] })
  const { id: a } = await env.sluice.enqueue(job, { n: 'a' })
  expect(await env.sluice.drain()).toMatchObject({ deadLettered: 1 })
  fail = false
  await env.sluice.enqueue(job, { n: 'b' })
  // b holds the only slot: the replay would be discarded, so the dead letter stays.
  expect(await env.sluice.deadLetters.retry(a!)).toEqual({
    requeued: [],
    kept: [{ id: a, reason: 'concurrency key replay at its limit of 1' }],
  })
  expect(await env.sql(`SELECT id::text FROM $schema.dead_letters`)).toEqual([{ id: a }])
  expect(await env.sql(`SELECT value FROM $schema.semaphores`)).toEqual([{ value: 1 }])
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await env.sluice.deadLetters.retry(a!)).toEqual({ requeued: [a], kept: [] })
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
})
