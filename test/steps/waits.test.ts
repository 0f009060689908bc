import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { type Duration, defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const until = async (check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> => {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const waiter = (seen: unknown[], timeout: Duration = '1h') =>
  defineJob({
    name: 'await-payment',
    input: z.object({ order: z.number() }),
    run: async (input, ctx) => {
      const event = await ctx.waitForEvent('paid', {
        topic: 'payment.*',
        match: { order: input.order },
        timeout,
      })
      seen.push(event === null ? null : event.payload)
      return event === null ? 'timed out' : 'paid'
    },
  })

describe('ctx.waitForEvent', () => {
  test('the matching publish resumes the job with the event; a non-matching one does not', async () => {
    const seen: unknown[] = []
    const job = waiter(seen)
    env = await makeSluice({ jobs: [job] })
    const { id } = await env.sluice.enqueue(job, { order: 7 })
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 0 })
    const [row] = await env.sql<{ waiting: number; run_at: Date }>('SELECT waiting, run_at FROM $schema.jobs')
    expect(row?.waiting).toBe(1)
    // The miss: another order, and another topic.
    await env.sluice.publish('payment.settled', { order: 8 })
    await env.sluice.publish('refund.settled', { order: 7 })
    expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
    // The match.
    await env.sluice.publish('payment.settled', { order: 7, amount: 12 })
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 1 })
    expect(seen).toEqual([{ order: 7, amount: 12 }])
    expect(await env.sql('SELECT result FROM $schema.archive WHERE id = $1', [id])).toEqual([
      { result: 'paid' },
    ])
  })

  test('without match, any payload matches: an object, a number, an array or null', async () => {
    const seen: unknown[] = []
    const job = defineJob({
      name: 'await-anything',
      input: z.object({ topic: z.string() }),
      run: async (input, ctx) => {
        const event = await ctx.waitForEvent('any', { topic: input.topic, timeout: '1h' })
        seen.push(event?.payload)
      },
    })
    env = await makeSluice({ jobs: [job] })
    const payloads: [string, unknown][] = [
      ['any.object', { a: 1 }],
      ['any.number', 42],
      ['any.array', [1, 2]],
      ['any.null', null],
    ]
    for (const [topic] of payloads) await env.sluice.enqueue(job, { topic })
    await env.sluice.drain()
    for (const [topic, payload] of payloads) await env.sluice.publish(topic, payload)
    await env.sluice.drain()
    expect(seen).toHaveLength(4)
    expect(seen).toEqual(expect.arrayContaining([{ a: 1 }, 42, [1, 2], null]))
  })

  test('the timeout resumes the job with null', async () => {
    const seen: unknown[] = []
    const job = waiter(seen, 300)
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueue(job, { order: 1 })
    await env.sluice.drain()
    await until(async () => (await env!.sluice.drain()).completed === 1, 'the timeout')
    expect(seen).toEqual([null])
    expect(await env.sql('SELECT result FROM $schema.archive')).toEqual([{ result: 'timed out' }])
  })

  test('an event published after the run started but before the wait was recorded is not lost', async () => {
    const seen: unknown[] = []
    let publishNow: (() => Promise<void>) | undefined
    const job = defineJob({
      name: 'late-waiter',
      input: z.object({ order: z.number() }),
      run: async (input, ctx) => {
        // The event goes out while the run is busy, before its wait exists.
        await ctx.step('busy', async () => {
          await publishNow!()
          return true
        })
        const event = await ctx.waitForEvent('paid', {
          topic: 'payment.settled',
          match: { order: input.order },
          timeout: '1h',
        })
        seen.push(event?.payload ?? null)
      },
    })
    env = await makeSluice({ jobs: [job] })
    publishNow = async () => {
      await env!.sluice.publish('payment.settled', { order: 3 })
    }
    await env.sluice.enqueue(job, { order: 3 })
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 1 })
    expect(seen).toEqual([{ order: 3 }])
  })

  test('a publish racing the wait being recorded: the job resumes every time, never lost', async () => {
    // Many jobs reach their wait while their events are published concurrently from other
    // connections. Each event is published once its job's run has begun (as an event caused by
    // the run is), and races that run recording its wait: either the publish finds the wait, or
    // the wait finds the event in the log.
    const n = 40
    const begun = Array.from({ length: n }, () => {
      let resolve = () => {}
      const promise = new Promise<void>((r) => {
        resolve = r
      })
      return { promise, resolve }
    })
    const seen: unknown[] = []
    const job = defineJob({
      name: 'await-payment',
      input: z.object({ order: z.number() }),
      run: async (input, ctx) => {
        begun[input.order]!.resolve()
        const event = await ctx.waitForEvent('paid', {
          topic: 'payment.*',
          match: { order: input.order },
          timeout: '1h',
        })
        seen.push(event === null ? null : event.payload)
      },
    })
    env = await makeSluice({ jobs: [job], drain: { concurrency: 8 } })
    for (let i = 0; i < n; i++) await env.sluice.enqueue(job, { order: i })
    const draining = env.sluice.drain()
    const publishing = Promise.all(
      begun.map(async ({ promise }, order) => {
        await promise
        await env!.sluice.publish('payment.settled', { order })
      }),
    )
    await Promise.all([draining, publishing])
    await until(async () => {
      await env!.sluice.drain()
      return (await env!.sql<{ n: number }>('SELECT count(*)::int AS n FROM $schema.archive'))[0]!.n === n
    }, 'every job to resume')
    expect(seen).toHaveLength(n)
    expect(seen).not.toContain(null)
    expect(await env.sql('SELECT count(*)::int AS n FROM $schema.jobs')).toEqual([{ n: 0 }])
  })

  test('an event published before the run began is not looked for; the wait takes the next one', async () => {
    const seen: unknown[] = []
    const job = waiter(seen)
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueue(job, { order: 3 })
    await env.sluice.publish('payment.settled', { order: 3, copy: 'before' })
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 0 })
    expect(await env.sql('SELECT state FROM $schema.job_steps')).toEqual([{ state: 'waiting' }])
    await env.sluice.publish('payment.settled', { order: 3, copy: 'after' })
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 1 })
    expect(seen).toEqual([{ order: 3, copy: 'after' }])
  })

  test('10,000 events with 1,000 waiting jobs: each waiting job resumed once', async () => {
    let runs = 0
    const job = defineJob({
      name: 'await-many',
      input: z.object({ order: z.number() }),
      run: async (input, ctx) => {
        runs++
        const event = await ctx.waitForEvent('paid', {
          topic: 'orders.*.paid',
          match: { order: input.order },
          timeout: '1h',
        })
        if (event === null) throw new Error('no event')
      },
    })
    env = await makeSluice({ jobs: [job], drain: { concurrency: 50, batchSize: 100 } })
    const waiting = 1000
    await env.sluice.enqueueMany(
      job,
      Array.from({ length: waiting }, (_, order) => ({ order })),
    )
    while ((await env.sluice.drain()).claimed > 0) {}
    expect(runs).toBe(waiting)
    expect(
      await env.sql('SELECT count(*)::int AS n FROM $schema.job_steps WHERE state = $1', ['waiting']),
    ).toEqual([{ n: waiting }])
    // Ten events per waiting job, several publishers at once.
    const orders = Array.from({ length: 10 * waiting }, (_, i) => i % waiting)
    const publishers = 4
    await Promise.all(
      Array.from({ length: publishers }, async (_, p) => {
        for (let i = p; i < orders.length; i += publishers)
          await env!.sluice.publish(`orders.eu.paid`, { order: orders[i], copy: i })
      }),
    )
    expect(
      await env.sql('SELECT count(*)::int AS n FROM $schema.job_steps WHERE state = $1', ['waiting']),
    ).toEqual([{ n: 0 }])
    while ((await env.sluice.drain()).claimed > 0) {}
    // Resumed once each: one more run per job, then archived.
    expect(runs).toBe(2 * waiting)
    expect(await env.sql('SELECT count(*)::int AS n FROM $schema.archive')).toEqual([{ n: waiting }])
  }, 120_000)
})

describe('a wait and the deadline', () => {
  test("a run cut by the deadline after it recorded a wait is due at the wait's timeout, not never", async () => {
    let slowRuns = 0
    const job = defineJob({
      name: 'wait-and-work',
      input: z.object({}),
      run: async (_input, ctx) => {
        await ctx.step('first', () => 1)
        const [event] = await Promise.all([
          ctx.waitForEvent('never', { topic: 'never.comes', timeout: 300 }),
          ctx.step('slow', async () => {
            // The first run's is cut by the drain's deadline; the next one is quick.
            if (slowRuns++ === 0) await new Promise((r) => setTimeout(r, 3_000))
            return 'done'
          }),
        ])
        return { event }
      },
    })
    env = await makeSluice({ jobs: [job] })
    const { id } = await env.sluice.enqueue(job, {})
    const before = Date.now()
    await env.sluice.drain({ budgetMs: 800 })
    const [row] = await env.sql<{
      run_at: Date
      waiting: number
      attempts: number
      lease_token: string | null
    }>('SELECT run_at, waiting, attempts, lease_token FROM $schema.jobs WHERE id = $1', [id])
    // Put back after progress (attempt uncounted), due when the wait times out.
    expect(row).toMatchObject({ waiting: 1, attempts: 0, lease_token: null })
    expect(row!.run_at.getTime()).toBeLessThan(before + 5_000)
    await until(
      async () => (await env!.sluice.drain()).completed === 1,
      'the timed-out wait to resume the job',
    )
    expect(await env.sql('SELECT result FROM $schema.archive WHERE id = $1', [id])).toEqual([
      { result: { event: null } },
    ])
  })
})

describe('ctx.invoke', () => {
  test('a fan-out of 50 children resumes the parent once, when the last child ends, with their results', async () => {
    let parentRuns = 0
    const child = defineJob({
      name: 'square',
      input: z.object({ n: z.number() }),
      run: (input) => input.n * input.n,
    })
    const parent = defineJob({
      name: 'sum-of-squares',
      input: z.object({ count: z.number() }),
      run: async (input, ctx) => {
        parentRuns++
        const results = await Promise.all(
          Array.from({ length: input.count }, (_, n) => ctx.invoke(`square-${n}`, child, { n })),
        )
        return (results as number[]).reduce((a, b) => a + b, 0)
      },
    })
    env = await makeSluice({ jobs: [parent, child], drain: { concurrency: 10 } })
    const { id } = await env.sluice.enqueue(parent, { count: 50 })
    while ((await env.sluice.drain()).claimed > 0) {}
    expect(parentRuns).toBe(2)
    const expected = Array.from({ length: 50 }, (_, n) => n * n).reduce((a, b) => a + b, 0)
    expect(await env.sql('SELECT result FROM $schema.archive WHERE id = $1', [id])).toEqual([
      { result: expected },
    ])
  })

  test('a dead-lettered child makes the invoke throw its error, which the parent may catch', async () => {
    const child = defineJob({
      name: 'always-fails',
      input: z.object({}),
      retry: 1,
      run: () => {
        throw new Error('the partner API is down')
      },
    })
    const parent = defineJob({
      name: 'tolerant-parent',
      input: z.object({}),
      run: async (_input, ctx) => {
        try {
          await ctx.invoke('call', child, {})
          return 'ok'
        } catch (error) {
          return { caught: (error as { code?: string }).code, message: (error as Error).message }
        }
      },
    })
    env = await makeSluice({ jobs: [parent, child] })
    const { id } = await env.sluice.enqueue(parent, {})
    while ((await env.sluice.drain()).claimed > 0) {}
    const [row] = await env.sql<{ result: { caught: string; message: string } }>(
      'SELECT result FROM $schema.archive WHERE id = $1',
      [id],
    )
    expect(row?.result.caught).toBe('CHILD_FAILED')
    expect(row?.result.message).toContain('the partner API is down')
  })
})

describe('cancel', () => {
  test('cancelling a sleeping job deletes it with its steps; its waiting children are cancelled by default', async () => {
    // On a queue of its own that no drain here serves: it stays waiting.
    const child = defineJob({ name: 'slow-child', queue: 'later', input: z.object({}), run: () => 1 })
    const sleeper = defineJob({
      name: 'long-sleeper',
      input: z.object({}),
      run: async (_input, ctx) => {
        await ctx.step('one', () => 1)
        await ctx.sleep('nap', '30d')
      },
    })
    const parent = defineJob({
      name: 'waiting-parent',
      input: z.object({}),
      run: async (_input, ctx) => {
        await ctx.invoke('child', child, {})
      },
    })
    env = await makeSluice({ jobs: [sleeper, parent, child] })
    const s = await env.sluice.enqueue(sleeper, {})
    const p = await env.sluice.enqueue(parent, {})
    await env.sluice.drain({ queues: ['default'] })
    expect(await env.sql('SELECT name, waiting FROM $schema.jobs ORDER BY id')).toEqual([
      { name: 'long-sleeper', waiting: null },
      { name: 'waiting-parent', waiting: 1 },
      { name: 'slow-child', waiting: null },
    ])
    const [childRow] = await env.sql<{ id: string }>(
      `SELECT id::text FROM $schema.jobs WHERE name = 'slow-child'`,
    )
    expect(childRow).toBeDefined()
    await env.sluice.cancelJob(s.id!)
    await env.sluice.cancelJob(p.id!)
    expect(await env.sql('SELECT name FROM $schema.jobs')).toEqual([])
    expect(await env.sql('SELECT job_id FROM $schema.job_steps')).toEqual([])
  })

  test('with children: keep, the child runs on after its parent is cancelled, and its end resolves nothing', async () => {
    const child = defineJob({ name: 'kept-child', queue: 'later', input: z.object({}), run: () => 'done' })
    const parent = defineJob({
      name: 'cancelled-parent',
      input: z.object({}),
      run: async (_input, ctx) => ctx.invoke('child', child, {}),
    })
    env = await makeSluice({ jobs: [parent, child] })
    const p = await env.sluice.enqueue(parent, {})
    await env.sluice.drain({ queues: ['default'] })
    await env.sluice.cancelJob(p.id!, { children: 'keep' })
    expect(await env.sql('SELECT name FROM $schema.jobs')).toEqual([{ name: 'kept-child' }])
    await env.sluice.drain({ queues: ['later'] })
    expect(await env.sql('SELECT name, result FROM $schema.archive')).toEqual([
      { name: 'kept-child', result: 'done' },
    ])
  })
})

describe('a dead letter with an open wait', () => {
  test('retried, it waits again (not a busy loop), and the event resumes it', async () => {
    let runs = 0
    const job = defineJob({
      name: 'wait-then-fail',
      input: z.object({}),
      retry: 1,
      run: async (_input, ctx) => {
        runs++
        // The first run records its wait and fails beside it: dead-lettered with the wait open.
        const [event] = await Promise.all([
          ctx.waitForEvent('go', { topic: 'go.now', timeout: '1h' }),
          runs === 1 ? Promise.reject(new Error('broken beside the wait')) : Promise.resolve(),
        ])
        return event?.payload ?? null
      },
    })
    env = await makeSluice({ jobs: [job] })
    const { id } = await env.sluice.enqueue(job, {})
    await env.sluice.drain()
    expect(await env.sluice.deadLetters.list()).toHaveLength(1)
    await env.sluice.deadLetters.retry(id!)
    await env.sluice.drain()
    await env.sluice.drain()
    // One run after the retry, then it waits: due at the wait's timeout, not now.
    expect(runs).toBe(2)
    const [row] = await env.sql<{ run_at: Date }>('SELECT run_at FROM $schema.jobs WHERE id = $1', [id])
    expect(row!.run_at.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000)
    await env.sluice.publish('go.now', { ok: true })
    await env.sluice.drain()
    expect(await env.sluice.result(id!)).toMatchObject({ state: 'completed', result: { ok: true } })
  })
})
