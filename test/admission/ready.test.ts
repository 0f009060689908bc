/**
 * queue_ready, behind the wake task's backlog and a drain's `remainingReady`: a policy's jobs
 * count as ready only in partitions whose gates would admit one now.
 */
import { afterEach, beforeEach, expect, test } from 'vitest'
import { readyBacklog } from '../../src/sql/wake.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

/** The ready backlog of each queue given (0 when the wake task would not wake it). */
async function backlog(...queues: string[]): Promise<Record<string, number>> {
  const rows = await s.run<{ queue: string; n: number }>(readyBacklog(s.t, queues, 100))
  const found = Object.fromEntries(rows.map((r) => [r.queue, r.n]))
  return Object.fromEntries(queues.map((q) => [q, found[q] ?? 0]))
}

test('a partition at its cap, set by hand or by its concurrency, has nothing ready', async () => {
  const seed = async (
    queue: string,
    partition: Parameters<SqlSchema['rows']['partition']>[0],
    running = 0,
  ) => {
    await s.rows.partition({ ...partition, queue })
    const job = {
      queue,
      name: partition.policy,
      policy: partition.policy,
      partitionKey: partition.partitionKey,
    }
    for (let i = 0; i < running; i++) await s.rows.leased('inv-1', job)
    await s.rows.job(job)
    await s.rows.job(job)
  }
  await seed('open', { policy: 'p-open', partitionKey: 'k', maxInFlight: 2 }, 1)
  await seed('zero', { policy: 'p-zero', partitionKey: 'k', maxInFlight: 5, capOverride: 0 })
  await seed('full', { policy: 'p-full', partitionKey: 'k', maxInFlight: 1 }, 1)
  await seed('adaptive', { policy: 'p-adaptive', partitionKey: 'k', adaptiveMin: 1, adaptiveCap: 2.5 }, 2)
  await seed('paused', { policy: 'p-paused', partitionKey: 'k', paused: true })
  expect(await backlog('open', 'zero', 'full', 'adaptive', 'paused')).toEqual({
    open: 2,
    zero: 0,
    full: 0,
    adaptive: 0,
    paused: 0,
  })
})

test('a policy at its global cap has nothing ready, in any partition', async () => {
  await s.rows.policy({ name: 'capped', queue: 'g', globalMax: 1 })
  await s.rows.policy({ name: 'roomy', queue: 'h', globalMax: 2 })
  for (const [policy, queue] of [
    ['capped', 'g'],
    ['roomy', 'h'],
  ] as const) {
    for (const key of ['a', 'b']) {
      await s.rows.partition({ policy, partitionKey: key, queue })
      await s.rows.job({ queue, name: policy, policy, partitionKey: key })
    }
    await s.rows.leased('inv-1', { queue, name: policy, policy, partitionKey: 'a' })
  }
  expect(await backlog('g', 'h')).toEqual({ g: 0, h: 2 })
})

test("a queue's plain and admitted jobs count together, up to the cap", async () => {
  for (let i = 0; i < 3; i++) await s.rows.job({ queue: 'mixed', name: 'plain' })
  await s.rows.partition({ policy: 'p', partitionKey: 'k', queue: 'mixed' })
  for (let i = 0; i < 2; i++) await s.rows.job({ queue: 'mixed', name: 'p', policy: 'p', partitionKey: 'k' })
  // Another queue's partition adds nothing to a queue of plain jobs.
  for (let i = 0; i < 2; i++) await s.rows.job({ queue: 'plain-only', name: 'plain' })
  expect(await backlog('mixed', 'plain-only')).toEqual({ mixed: 5, 'plain-only': 2 })
  const capped = async (cap: number): Promise<number> => {
    const [row] = await s.run<{ queue: string; n: number }>(readyBacklog(s.t, ['mixed'], cap))
    return row?.n ?? 0
  }
  expect(await capped(4)).toBe(4)
  expect(await capped(2)).toBe(2)
  // The same from a drain's last settle (its `ready`).
  const [ready] = await s.sql<{ n: number }>(`SELECT $t.queue_ready('{mixed,plain-only}', 1000) AS n`)
  expect(ready?.n).toBe(7)
})
