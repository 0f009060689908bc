import { afterAll, beforeAll, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const work = defineJob({ name: 'work', input: z.object({}), run: () => {} })
const fail = defineJob({
  name: 'fail',
  queue: 'fragile',
  input: z.object({}),
  retry: 1,
  run: () => {
    throw new Error('boom')
  },
})
const idle = defineJob({ name: 'idle', queue: 'idle', input: z.object({}), run: () => {} })

let t: TestSluice
beforeAll(async () => {
  t = await makeSluice({ jobs: [work, fail, idle] })
})
afterAll(() => t.cleanup())

test('sluice.metrics(): every queue in one statement, defined queues even when empty', async () => {
  await t.sluice.enqueue(work, {}, { runAt: new Date(Date.now() - 120_000) })
  await t.sluice.enqueue(work, {})
  await t.sluice.enqueue(work, {}, { delay: 600_000 })
  const leased = await t.sluice.enqueue(work, {})
  // As a claim leaves it: a lease token and the lease's end (its place, run_at, unchanged).
  await t.sql(
    `UPDATE $schema.jobs SET lease_token = gen_random_uuid(), attempts = 1, lease_until = now() + interval '1 minute'
     WHERE id = $1`,
    [leased.id],
  )
  await t.sluice.enqueue(fail, {})
  expect((await t.sluice.drain({ queues: ['fragile'] })).deadLettered).toBe(1)
  // A queue no job defines any more still shows while it has rows.
  await t.sql(`INSERT INTO $schema.jobs (queue, name, payload) VALUES ('retired', 'gone', '{}')`)

  t.statements.reset()
  const metrics = await t.sluice.metrics()
  expect(t.statements.count).toBe(1)
  const age = metrics.find((m) => m.queue === 'default')!.oldestReadyAgeSeconds
  expect(age).toBeGreaterThanOrEqual(119)
  expect(age).toBeLessThan(600)
  expect(metrics.map((m) => ({ ...m, oldestReadyAgeSeconds: m.oldestReadyAgeSeconds > 0 }))).toEqual([
    {
      queue: 'default',
      ready: 2,
      delayed: 1,
      inFlight: 1,
      retrying: 0,
      deadLettered: 0,
      oldestReadyAgeSeconds: true,
      blocked: 0,
      paused: false,
      breakerUntil: null,
    },
    {
      queue: 'fragile',
      ready: 0,
      delayed: 0,
      inFlight: 0,
      retrying: 0,
      deadLettered: 1,
      oldestReadyAgeSeconds: false,
      blocked: 0,
      paused: false,
      breakerUntil: null,
    },
    {
      queue: 'idle',
      ready: 0,
      delayed: 0,
      inFlight: 0,
      retrying: 0,
      deadLettered: 0,
      oldestReadyAgeSeconds: false,
      blocked: 0,
      paused: false,
      breakerUntil: null,
    },
    {
      queue: 'retired',
      ready: 1,
      delayed: 0,
      inFlight: 0,
      retrying: 0,
      deadLettered: 0,
      oldestReadyAgeSeconds: true,
      blocked: 0,
      paused: false,
      breakerUntil: null,
    },
  ])
})
