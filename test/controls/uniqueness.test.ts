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

const importOrder = (onConflict: 'reject' | 'discard' | 'log') =>
  defineJob({
    name: `import-order-${onConflict}`,
    input: z.object({ orderId: z.string() }),
    unique: { key: (i) => `import-order:${i.orderId}`, onConflict },
    run: () => {},
  })

test.each(['reject', 'discard'] as const)(
  '100 concurrent enqueues with one until-executed key: exactly one accepted (%s)',
  async (onConflict) => {
    const job = importOrder(onConflict)
    env = await makeSluice({ jobs: [job] })
    const clients = connections({ jobs: [job] }, 20)
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => clients[i % clients.length]!.enqueue(job, { orderId: '42' })),
    )
    const accepted = results.filter((r) => r.status === 'fulfilled' && r.value.status === 'enqueued')
    expect(accepted).toHaveLength(1)
    const acceptedId = (accepted[0] as PromiseFulfilledResult<{ id: string }>).value.id
    if (onConflict === 'reject') {
      const rejected = results.filter((r) => r.status === 'rejected')
      expect(rejected).toHaveLength(99)
      for (const r of rejected) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError)
    } else {
      const duplicates = results.filter((r) => r.status === 'fulfilled' && r.value.status === 'duplicate')
      expect(duplicates).toHaveLength(99)
      for (const d of duplicates)
        expect((d as PromiseFulfilledResult<{ existingId: string }>).value.existingId).toBe(acceptedId)
    }
    expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 1 }])

    // After completion the key is free again.
    expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
    expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.unique_locks`)).toEqual([{ n: 0 }])
    expect(await env.sluice.enqueue(job, { orderId: '42' })).toMatchObject({ status: 'enqueued' })
  },
)

test('the lock holds through retries and is released when the job is dead-lettered', async () => {
  const job = defineJob({
    name: 'unique-failing',
    input: z.object({ k: z.string() }),
    retry: { maxAttempts: 2, baseDelayMs: 0, jitter: 0 },
    unique: { key: (i) => i.k, onConflict: 'discard' },
    run: () => {
      throw new Error('nope')
    },
  })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueue(job, { k: 'a' })
  expect(await env.sluice.drain()).toMatchObject({ retried: 1 })
  expect(await env.sluice.enqueue(job, { k: 'a' })).toMatchObject({ status: 'duplicate' })
  expect(await env.sluice.drain()).toMatchObject({ deadLettered: 1 })
  expect(await env.sluice.enqueue(job, { k: 'a' })).toMatchObject({ status: 'enqueued' })
})

test('while-executing: duplicates queue up but never run at the same time, across drains', async () => {
  const recorder = new OverlapRecorder()
  const job = defineJob({
    name: 'sync-account',
    input: z.object({ account: z.string(), n: z.number() }),
    unique: { key: (i) => `sync:${i.account}`, strategy: 'while-executing' },
    run: (input) => recorder.track(String(input.n), () => sleep(15)),
  })
  env = await makeSluice({ jobs: [job] })
  const enqueued = await env.sluice.enqueueMany(
    job,
    Array.from({ length: 20 }, (_, n) => ({ account: 'acme', n })),
  )
  expect(enqueued.every((r) => r.status === 'enqueued')).toBe(true)
  const drains = connections({ jobs: [job] }, 4)
  expect(await drainAll(drains, { concurrency: 4 }, { total: 20 })).toBe(20)
  expect(recorder.max).toBe(1)
  expect(recorder.starts).toHaveLength(20)
})

test('a drain that dies holding a while-executing lock: maintenance reaps it and the duplicates run', async () => {
  const ran: number[] = []
  const job = defineJob({
    name: 'exclusive',
    input: z.object({ n: z.number() }),
    unique: { key: () => 'only-one', strategy: 'while-executing' },
    run: (input) => void ran.push(input.n),
  })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueueMany(job, [{ n: 1 }, { n: 2 }])
  // A drain takes job 1 and its lock, then dies: its invocation and the lock stay behind.
  await env.sql(`SELECT * FROM $schema.claim(ARRAY['default'], 1, 60000, 'dead-drain', 0, 0)`)
  expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
  await env.sql(`UPDATE $schema.invocations SET expires_at = now() - interval '1 ms'`)
  await env.sql(endLeasesSql('$schema'))
  // Before maintenance the lock still belongs to the dead drain's job; job 1 itself may retake it.
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'reap-invocations')?.rows).toBe(1)
  expect(report.tasks.find((t) => t.task === 'reap-locks')?.rows).toBe(1)
  // One key, one run at a time: the two jobs take a claim each, in one drain (the first claim
  // says it dropped job 2, so the drain claims again once job 1 has settled).
  expect(await env.sluice.drain()).toMatchObject({ claimed: 2, completed: 2, stoppedBy: 'empty' })
  expect(ran.sort()).toEqual([1, 2])
})

test('a dead letter whose unique key is taken again stays a dead letter when replayed', async () => {
  let fail = true
  const job = defineJob({
    name: 'unique-replay',
    input: z.object({ k: z.string() }),
    retry: 1,
    unique: { key: (i) => i.k },
    run: () => {
      if (fail) throw new Error('no')
    },
  })
  env = await makeSluice({ jobs: [job] })
  const { id } = await env.sluice.enqueue(job, { k: 'x' })
  expect(await env.sluice.drain()).toMatchObject({ deadLettered: 1 })
  const holder = await env.sluice.enqueue(job, { k: 'x' })
  expect(await env.sluice.deadLetters.retry(id!)).toEqual({
    requeued: [],
    kept: [{ id, reason: `unique key x held by job ${holder.id}` }],
  })
  expect(await env.sluice.deadLetters.list()).toHaveLength(1)
  fail = false
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await env.sluice.deadLetters.retry(id!)).toEqual({ requeued: [id], kept: [] })
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
})
