import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, PermanentJobError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

// What happened to a job, from the first attempt to the last, wherever the job is now: waiting,
// running, archived or dead-lettered.

let failuresLeft = 0
const flaky = defineJob({
  name: 'flaky',
  queue: 'flaky',
  input: z.object({}),
  retry: { maxAttempts: 3, baseDelayMs: 1 },
  run: async () => {
    await new Promise((r) => setTimeout(r, 15))
    if (failuresLeft-- > 0) throw new Error('not yet')
  },
})
const hopeless = defineJob({
  name: 'hopeless',
  queue: 'hopeless',
  input: z.object({}),
  retry: { maxAttempts: 2, baseDelayMs: 1 },
  run: () => {
    throw new PermanentJobError('no such account')
  },
})
let release: () => void = () => {}
let started: () => void = () => {}
const slow = defineJob({
  name: 'slow',
  queue: 'slow',
  input: z.object({}),
  run: async () => {
    started()
    await new Promise<void>((r) => {
      release = r
    })
  },
})

describe('the attempts timeline', () => {
  let t: TestSluice
  beforeAll(async () => {
    t = await makeSluice({ jobs: [flaky, hopeless, slow] })
  })
  afterAll(async () => {
    await t?.cleanup()
  })

  test('a completed job keeps its failed attempts and shows the one that completed it', async () => {
    failuresLeft = 1
    const id = (await t.sluice.enqueue(flaky, {})).id!
    // The first attempt fails; the retry is due a millisecond later and completes.
    for (let i = 0; i < 20 && (await t.sql('SELECT 1 FROM $schema.jobs WHERE id = $1', [id])).length; i++)
      await t.sluice.drain({ queues: ['flaky'], maxJobs: 1 })
    const job = await t.sluice.inspect.job(id)
    expect(job).toMatchObject({ id, state: 'completed', attempts: 2, reason: null })
    expect(job!.endedAt).toBeInstanceOf(Date)
    const [first, last] = job!.timeline
    expect(job!.timeline).toHaveLength(2)
    expect(first).toMatchObject({ attempt: 1, outcome: 'failed', error: { message: 'not yet' } })
    expect(last).toMatchObject({ attempt: 2, outcome: 'completed', error: null })
    expect(last!.durationMs).toBeGreaterThanOrEqual(10)
    expect(new Date(last!.endedAt!).getTime() - new Date(last!.startedAt!).getTime()).toBe(last!.durationMs)
    expect(last!.invocation).toMatch(/\S/)
    expect(last!.invocation).not.toBe(first!.invocation)
    expect(new Date(last!.endedAt!).getTime()).toBe(job!.endedAt!.getTime())
  })

  test('a job that completed at once has one attempt, with no error history kept for it', async () => {
    failuresLeft = 0
    const id = (await t.sluice.enqueue(flaky, {})).id!
    await t.sluice.drain({ queues: ['flaky'], maxJobs: 1 })
    const job = await t.sluice.inspect.job(id)
    expect(job).toMatchObject({
      state: 'completed',
      errors: [],
      timeline: [{ attempt: 1, outcome: 'completed' }],
    })
    const [row] = await t.sql<{ errors: unknown }>('SELECT errors FROM $schema.archive WHERE id = $1', [id])
    expect(row!.errors).toBeNull()
  })

  test('a dead letter shows every failed attempt', async () => {
    const id = (await t.sluice.enqueue(hopeless, {})).id!
    await t.sluice.drain({ queues: ['hopeless'], maxJobs: 1 })
    const job = await t.sluice.inspect.job(id)
    expect(job).toMatchObject({ id, state: 'dead', attempts: 1, reason: null })
    expect(job!.timeline).toMatchObject([
      { attempt: 1, outcome: 'failed', error: { name: 'PermanentJobError', message: 'no such account' } },
    ])
    expect(job!.timeline[0]!.invocation).toMatch(/\S/)
  })

  test('a running attempt shows when its claim took it, and by which drain', async () => {
    const id = (await t.sluice.enqueue(slow, {})).id!
    const running = new Promise<void>((r) => {
      started = r
    })
    const before = Date.now()
    const drain = t.sluice.drain({ queues: ['slow'], maxJobs: 1, invocationId: 'drn_timeline' })
    await running
    try {
      const job = await t.sluice.inspect.job(id)
      expect(job).toMatchObject({ state: 'running', endedAt: null })
      const [now] = job!.timeline
      expect(job!.timeline).toHaveLength(1)
      expect(now).toMatchObject({ attempt: 1, outcome: 'running', invocation: 'drn_timeline', endedAt: null })
      // The database's clock, so only roughly the test's.
      expect(Math.abs(new Date(now!.startedAt!).getTime() - before)).toBeLessThan(60_000)
    } finally {
      release()
      await drain
    }
    expect((await t.sluice.inspect.job(id))!.timeline).toMatchObject([
      { attempt: 1, outcome: 'completed', invocation: 'drn_timeline' },
    ])
  })

  test('a job that is nowhere is null, and the page says where it could have gone', async () => {
    expect(await t.sluice.inspect.job('987654321')).toBeNull()
  })
})
