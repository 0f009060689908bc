import { afterEach, expect, test } from 'vitest'
import * as z from 'zod'
import { defineJob, PermanentJobError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { sleep } from '../helpers/overlap.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

test('each finished attempt is recorded by the settle itself and summarised in one statement', async () => {
  const quick = defineJob({ name: 'quick', input: z.object({}), run: () => {} })
  const slow = defineJob({ name: 'slow', input: z.object({}), run: () => sleep(30) })
  const broken = defineJob({
    name: 'broken',
    input: z.object({ permanent: z.boolean() }),
    retry: { maxAttempts: 2, baseDelayMs: 0, jitter: 0 },
    run: (i) => {
      throw i.permanent ? new PermanentJobError('no') : new Error('again')
    },
  })
  const stale = defineJob({ name: 'stale', input: z.object({}), queueTimeout: 10, run: () => {} })
  env = await makeSluice({ jobs: [quick, slow, broken, stale] })
  await env.sluice.enqueueMany(quick, [{}, {}, {}])
  await env.sluice.enqueue(slow, {})
  await env.sluice.enqueue(broken, { permanent: false })
  await env.sluice.enqueue(broken, { permanent: true })
  await env.sluice.enqueue(stale, {}, { runAt: new Date(Date.now() - 60_000) })
  env.statements.reset()
  await env.sluice.drain()
  // Stats cost no extra statement: claim + settle-and-finish.
  expect(env.statements.count).toBe(2)
  await env.sluice.drain()

  const stats = await env.sluice.stats()
  expect(stats.statusCounts).toEqual({ completed: 4, failed: 1, dead: 2, expired: 1 })
  expect(stats.summary).toMatchObject({ finished: 8, successRate: 4 / 7 })
  expect(stats.slowest[0]).toMatchObject({ name: 'slow', runs: 1 })
  expect(stats.slowest[0]!.p95DurationMs).toBeGreaterThanOrEqual(25)
  expect(stats.throughput.reduce((n, m) => n + m.completed, 0)).toBe(4)
  expect(stats.summary.p95WaitMs).toBeGreaterThanOrEqual(59_000)
  await expect(env.sluice.stats({ sinceMs: -1 })).rejects.toMatchObject({ code: 'INVALID_INPUT' })
})
