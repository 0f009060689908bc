import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { backoffDelay, defineJob, type Hooks, type JobRun, PermanentJobError } from '../../src/index.js'
import { endLeasesSql, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const noop = defineJob({ name: 'noop', input: z.object({ n: z.number() }), run: () => {} })

describe('statement counts', () => {
  test('a drain costs one statement per batch plus one', async () => {
    // One statement in flight at a time (the pipeline test in drain-pipeline.test.ts counts the
    // deeper one).
    env = await makeSluice({ jobs: [noop], drain: { batchSize: 10, pipeline: 1 } })
    const { sluice, statements } = env
    await sluice.enqueueMany(
      noop,
      Array.from({ length: 35 }, (_, n) => ({ n })),
    )
    statements.reset()
    const summary = await sluice.drain()
    expect(summary).toMatchObject({ claimed: 35, completed: 35, stoppedBy: 'empty' })
    // 4 batches (10, 10, 10, 5): the first claim, then each batch's settle with the next claim,
    // and the last batch's settle with the invocation's end.
    expect(statements.count).toBe(5)
    statements.reset()
    expect(await sluice.drain()).toMatchObject({ claimed: 0, stoppedBy: 'empty' })
    expect(statements.count).toBe(2)
  })

  test('enqueueMany binds what its jobs share once and writes it on every row', async () => {
    env = await makeSluice({ jobs: [noop] })
    const later = await env.sluice.enqueueMany(noop, [{ n: 1 }, { n: 2 }], { priority: 5, delay: 60_000 })
    const fixed = await env.sluice.enqueueMany(noop, [{ n: 3 }, { n: 4 }], { runAt: '2030-01-01T00:00:00Z' })
    // The payloads travel as one array; queue, name, priority, attempts, timing and trace context
    // (null: untraced) once each.
    expect(env.statements.events.map((e) => e.values.length)).toEqual([8, 8])
    expect(env.statements.events.map((e) => e.values.at(-1))).toEqual([null, null])
    const rows = await env.sql(
      `SELECT id::text AS id, queue, name, payload, priority, max_attempts,
              run_at > now() + interval '50 seconds' AS later, run_at = '2030-01-01T00:00:00Z' AS fixed
       FROM $schema.jobs ORDER BY id`,
    )
    expect(rows.map((r) => r.id)).toEqual([...later, ...fixed].map((r) => r.id))
    const common = { queue: 'default', name: 'noop', max_attempts: noop.retry.maxAttempts }
    expect(rows.map(({ id: _, ...r }) => r)).toEqual([
      { ...common, payload: { n: 1 }, priority: 5, later: true, fixed: false },
      { ...common, payload: { n: 2 }, priority: 5, later: true, fixed: false },
      { ...common, payload: { n: 3 }, priority: 16384, later: true, fixed: true },
      { ...common, payload: { n: 4 }, priority: 16384, later: true, fixed: true },
    ])
  })

  test('enqueueMany of 10,000 inputs is one statement', async () => {
    env = await makeSluice({ jobs: [noop] })
    const ids = await env.sluice.enqueueMany(
      noop,
      Array.from({ length: 10_000 }, (_, n) => ({ n })),
    )
    expect(env.statements.count).toBe(1)
    expect(ids).toHaveLength(10_000)
    const rows = await env.sql<{ id: string; n: number }>(
      `SELECT j.id::text AS id, (j.payload->>'n')::int AS n FROM $schema.jobs j ORDER BY j.id`,
    )
    expect(rows.map((r) => r.id)).toEqual(ids.map((r) => r.id))
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 10_000 }, (_, n) => n))
  })
})

describe('priority and scheduling', () => {
  test('lower priority numbers run first; delayed jobs wait', async () => {
    const order: string[] = []
    const job = defineJob({ name: 'ordered', input: z.string(), run: (s) => void order.push(s) })
    env = await makeSluice({ jobs: [job], drain: { concurrency: 1 } })
    await env.sluice.enqueue(job, 'mid')
    await env.sluice.enqueue(job, 'late', { delay: 60_000 })
    await env.sluice.enqueue(job, 'urgent', { priority: 0 })
    await env.sluice.enqueue(job, 'lazy', { priority: 32767 })
    await env.sluice.enqueue(job, 'past', { runAt: new Date(Date.now() - 1000) })
    const summary = await env.sluice.drain()
    // Equal priorities run in due order: 'past' was due before 'mid'.
    expect(order).toEqual(['urgent', 'past', 'mid', 'lazy'])
    expect(summary.remainingReady).toBe(0)
    const [late] = await env.sql<{ wait: number }>(
      `SELECT extract(epoch FROM run_at - now())::float8 AS wait FROM $schema.jobs`,
    )
    expect(late!.wait).toBeGreaterThan(55)
  })
})

describe('retries and dead letters', () => {
  test('backoff follows the policy, then the job dead-letters after exactly maxAttempts', async () => {
    let runs = 0
    const policy = { maxAttempts: 4, baseDelayMs: 2_000, factor: 3, maxDelayMs: 10_000, jitter: 0.25 }
    const flaky = defineJob({
      name: 'flaky',
      input: z.object({}),
      retry: policy,
      run: (_input, ctx) => {
        runs++
        throw new Error(`failure ${ctx.attempt}`)
      },
    })
    env = await makeSluice({ jobs: [flaky] })
    const { id } = await env.sluice.enqueue(flaky, {})
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await env.sluice.drain()).toMatchObject({ claimed: 1, failed: 1, retried: 1 })
      const [row] = await env.sql<{ delay_ms: number; attempts: number; token: string | null }>(
        `SELECT (extract(epoch FROM run_at - now()) * 1000)::float8 AS delay_ms, attempts, lease_token AS token FROM $schema.jobs WHERE id = $1`,
        [id],
      )
      const nominal = Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.factor ** (attempt - 1))
      expect(row!.attempts).toBe(attempt)
      expect(row!.token).toBeNull()
      expect(row!.delay_ms).toBeGreaterThan(nominal * 0.75 - 500)
      expect(row!.delay_ms).toBeLessThanOrEqual(nominal * 1.25 + 10)
      // Nothing runs before its time...
      expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
      // ...then the test moves the clock for this job instead of sleeping.
      await env.sql(`UPDATE $schema.jobs SET run_at = now() - interval '1 ms' WHERE id = $1`, [id])
    }
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, deadLettered: 1, retried: 0 })
    expect(runs).toBe(4)
    expect(await env.sql(`SELECT 1 FROM $schema.jobs`)).toHaveLength(0)
    const [dead] = await env.sluice.deadLetters.list()
    expect(dead).toMatchObject({
      id,
      attempts: 4,
      name: 'flaky',
      lastError: { message: 'failure 4', attempt: 4 },
    })
    expect(dead!.errors.map((e) => (e as { message: string }).message)).toEqual([
      'failure 1',
      'failure 2',
      'failure 3',
      'failure 4',
    ])
  })

  test('backoffDelay caps and jitters', () => {
    const policy = { maxAttempts: 10, baseDelayMs: 1000, factor: 2, maxDelayMs: 5000, jitter: 0.2 }
    expect([1, 2, 3, 4, 5].map((a) => backoffDelay(policy, a, () => 0.5))).toEqual([
      1000, 2000, 4000, 5000, 5000,
    ])
    expect(backoffDelay(policy, 1, () => 0)).toBe(800)
    expect(backoffDelay(policy, 1, () => 1)).toBe(1200)
  })

  test('dead letters retry in bulk with attempts reset, and discard', async () => {
    let fail = true
    const job = defineJob({
      name: 'fickle',
      input: z.number(),
      retry: 1,
      run: () => {
        if (fail) throw new PermanentJobError('nope')
      },
    })
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueueMany(job, [1, 2, 3, 4])
    expect(await env.sluice.drain()).toMatchObject({ deadLettered: 4 })
    const [first] = await env.sluice.deadLetters.list({ limit: 1 })
    expect(await env.sluice.deadLetters.discard(first!.id)).toEqual([first!.id])
    expect((await env.sluice.deadLetters.retry({ name: 'fickle' })).requeued).toHaveLength(3)
    const rows = await env.sql<{ attempts: number }>(`SELECT attempts FROM $schema.jobs`)
    expect(rows.map((r) => r.attempts)).toEqual([0, 0, 0])
    fail = false
    expect(await env.sluice.drain()).toMatchObject({ completed: 3 })
    expect(await env.sluice.deadLetters.list()).toEqual([])
  })
})

describe('leases', () => {
  test('an abandoned claim is re-delivered after its lease and the stale ack is rejected', async () => {
    const attempts: number[] = []
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const slow = defineJob({
      name: 'slow',
      input: z.object({}),
      run: async (_input, ctx) => {
        attempts.push(ctx.attempt)
        if (ctx.attempt === 1) await gate
      },
    })
    env = await makeSluice({ jobs: [slow] })
    const { id } = await env.sluice.enqueue(slow, {})
    const stale = env.sluice.drain({ budgetMs: 45_000 })
    await expect.poll(() => attempts.length).toBe(1)
    // The first drain is stuck; its lease runs out (the test moves the job's clock).
    await env.sql(endLeasesSql('$schema', 'id = $1'), [id])
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 1 })
    expect(attempts).toEqual([1, 2])
    release()
    expect(await stale).toMatchObject({ claimed: 1, completed: 0, lostLeases: 1 })
    const archived = await env.sql<{ attempts: number }>(
      `SELECT attempts FROM $schema.archive WHERE id = $1`,
      [id],
    )
    expect(archived).toEqual([{ attempts: 2 }])
  })

  test('jobs that cannot finish before the deadline are handed back, attempt uncounted', async () => {
    const ran: number[] = []
    const sleeper = defineJob({
      name: 'sleeper-handback',
      input: z.number(),
      timeout: 2_000,
      run: async (n) => {
        ran.push(n)
        await new Promise((resolve) => setTimeout(resolve, 1_000))
      },
    })
    env = await makeSluice({ jobs: [sleeper], drain: { safetyMarginMs: 0, concurrency: 1 } })
    await env.sluice.enqueueMany(sleeper, [1, 2, 3])
    // The first fits (2 s timeout in a 2.4 s budget); after it, 1.4 s are left and the
    // observed duration (1 s, ×1.5) no longer fits, so the rest go back.
    const summary = await env.sluice.drain({ budgetMs: 2_400, batchSize: 3 })
    expect(ran).toEqual([1])
    expect(summary).toMatchObject({
      claimed: 3,
      completed: 1,
      handedBack: 2,
      stoppedBy: 'deadline',
      remainingReady: 2,
    })
    const rows = await env.sql<{ attempts: number; token: string | null; due: boolean }>(
      `SELECT attempts, lease_token AS token, run_at <= now() AS due FROM $schema.jobs`,
    )
    expect(rows).toEqual([
      { attempts: 0, token: null, due: true },
      { attempts: 0, token: null, due: true },
    ])
    expect(await env.sql(`SELECT 1 FROM $schema.invocations`)).toHaveLength(0)
    expect(await env.sluice.drain({ budgetMs: 10_000 })).toMatchObject({ completed: 2 })

    // Left to size its own batches, a drain claims no more than it can run: having seen a
    // 1 s job, it takes one at a time in a short budget and stops claiming when none fits.
    await env.sluice.enqueueMany(sleeper, [4, 5, 6])
    const sized = await env.sluice.drain({ budgetMs: 2_400 })
    expect(sized).toMatchObject({ completed: 1, handedBack: 0, stoppedBy: 'deadline', remainingReady: 2 })
  })

  test('a drain stopped while its batch runs starts none of the batch after the stop', async () => {
    const stop = new AbortController()
    const ran: number[] = []
    const stopper = defineJob({
      name: 'stopper',
      input: z.number(),
      // The stop (Ctrl-C in the CLI) comes while the batch's first job runs.
      run: (n) => {
        ran.push(n)
        stop.abort()
      },
    })
    env = await makeSluice({ jobs: [stopper], drain: { concurrency: 1 } })
    await env.sluice.enqueueMany(stopper, [1, 2, 3])
    const summary = await env.sluice.drain({ batchSize: 3, signal: stop.signal })
    expect(ran).toEqual([1])
    expect(summary).toMatchObject({ claimed: 3, completed: 1, handedBack: 2, stoppedBy: 'stopped' })
    const rows = await env.sql<{ attempts: number; token: string | null }>(
      `SELECT attempts, lease_token AS token FROM $schema.jobs ORDER BY id`,
    )
    expect(rows).toEqual([
      { attempts: 0, token: null },
      { attempts: 0, token: null },
    ])
    expect(await env.sluice.drain()).toMatchObject({ completed: 2 })
    expect(ran).toEqual([1, 2, 3])
  })

  test('the next batch is claimed while one runs; at the deadline it goes back unstarted', async () => {
    const leasedDuringRun: number[] = []
    const ran: number[] = []
    let sql: TestSluice['sql'] | undefined
    const pacer = defineJob({
      name: 'pacer-ahead',
      input: z.number(),
      timeout: 3_000,
      run: async (n) => {
        ran.push(n)
        if (n === 4) {
          // Batch [3, 4] runs; the claim of [5, 6] went out with it: wait (up to a second) for it
          // to commit, and record what is leased then (2 if no claim went out ahead).
          let leased = 0
          for (let i = 0; i < 40 && leased < 4; i++) {
            if (i > 0) await new Promise((resolve) => setTimeout(resolve, 25))
            const [row] = await sql!<{ n: number }>(
              `SELECT count(*)::int AS n FROM $schema.jobs WHERE lease_token IS NOT NULL`,
            )
            leased = row!.n
          }
          leasedDuringRun.push(leased)
        }
        if (n === 5) await new Promise((resolve) => setTimeout(resolve, 2_000))
      },
    })
    env = await makeSluice({ jobs: [pacer], drain: { safetyMarginMs: 0, concurrency: 1 } })
    sql = env.sql
    await env.sluice.enqueueMany(pacer, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    // The budget leaves seconds of slack around the 2 s job so that a loaded machine's delays
    // change nothing below.
    const summary = await env.sluice.drain({ budgetMs: 4_000, batchSize: 2 })
    // 3 and 4 (running), 5 and 6 (claimed ahead).
    expect(leasedDuringRun).toEqual([4])
    // 5 took 2 s: 6, expected to take as long, no longer fits, and 7 and 8, claimed while 5 ran,
    // never start.
    expect(ran).toEqual([1, 2, 3, 4, 5])
    expect(summary).toMatchObject({ claimed: 8, completed: 5, handedBack: 3, stoppedBy: 'deadline' })
    const rows = await env.sql<{ n: number; attempts: number; token: string | null; due: boolean }>(
      `SELECT payload::int AS n, attempts, lease_token AS token, run_at <= now() AS due FROM $schema.jobs ORDER BY id`,
    )
    expect(rows).toEqual([6, 7, 8, 9, 10].map((n) => ({ n, attempts: 0, token: null, due: true })))
    expect(await env.sluice.drain()).toMatchObject({ completed: 5, handedBack: 0, stoppedBy: 'empty' })
  })

  test('the handler signal fires at the job timeout and the attempt fails', async () => {
    let aborted = false
    const hang = defineJob({
      name: 'hang',
      input: z.object({}),
      timeout: 100,
      retry: 1,
      run: (_input, ctx) =>
        new Promise((_, reject) => {
          ctx.signal.addEventListener('abort', () => {
            aborted = true
            reject(new Error('aborted'))
          })
        }),
    })
    env = await makeSluice({ jobs: [hang] })
    await env.sluice.enqueue(hang, {})
    expect(await env.sluice.drain()).toMatchObject({ deadLettered: 1 })
    expect(aborted).toBe(true)
    const [dead] = await env.sluice.deadLetters.list()
    expect(dead!.lastError).toMatchObject({ name: 'JobTimeoutError' })
  })

  test('a job past its queue timeout is finished as expired without running', async () => {
    let ran = false
    const fresh = defineJob({
      name: 'fresh',
      input: z.object({}),
      queueTimeout: 1_000,
      run: () => {
        ran = true
      },
    })
    env = await makeSluice({ jobs: [fresh] })
    await env.sluice.enqueue(fresh, {}, { runAt: new Date(Date.now() - 5_000) })
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, expired: 1, completed: 0 })
    expect(ran).toBe(false)
    expect(await env.sql(`SELECT status FROM $schema.archive`)).toEqual([{ status: 'expired' }])
  })
})

describe('hooks', () => {
  test('run in order, and a throwing hook never loses a job', async () => {
    const calls: string[] = []
    const fatal: string[] = []
    const hooks: Hooks = {
      beforeEnqueue: (e) => void calls.push(`beforeEnqueue:${e.job}`),
      aroundEnqueue: async (_e, next) => {
        calls.push('aroundEnqueue:in')
        const r = await next()
        calls.push('aroundEnqueue:out')
        return r
      },
      afterEnqueue: () => {
        calls.push('afterEnqueue')
        throw new Error('after enqueue broke')
      },
      beforeExecution: (e) => {
        calls.push(`beforeExecution:${e.context.attempt}`)
        if (e.context.attempt === 1) throw new Error('not yet')
      },
      aroundExecution: async (_e, next) => {
        const r = await next()
        calls.push('aroundExecution')
        return r
      },
      afterExecution: () => {
        calls.push('afterExecution')
        throw new Error('after execution broke')
      },
      onFailure: (e) => {
        calls.push(`onFailure:${e.willRetry}`)
        throw new Error('failure hook broke')
      },
      onFatalError: (error) => void fatal.push((error as Error).message),
    }
    const job = defineJob({
      name: 'hooked',
      input: z.object({}),
      retry: { baseDelayMs: 0, jitter: 0 },
      run: () => void calls.push('run'),
    })
    env = await makeSluice({ jobs: [job], hooks })
    const { id } = await env.sluice.enqueue(job, {})
    expect(id).toMatch(/^\d+$/)
    expect(await env.sluice.drain()).toMatchObject({ retried: 1 })
    expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
    expect(calls).toEqual([
      'beforeEnqueue:hooked',
      'aroundEnqueue:in',
      'aroundEnqueue:out',
      'afterEnqueue',
      'beforeExecution:1',
      'onFailure:true',
      'beforeExecution:2',
      'run',
      'aroundExecution',
      'afterExecution',
    ])
    expect(fatal).toEqual(['after enqueue broke', 'failure hook broke', 'after execution broke'])
  })

  test('a throwing beforeEnqueue rejects the enqueue and writes nothing', async () => {
    const job = defineJob({ name: 'vetoed', input: z.object({}), run: () => {} })
    env = await makeSluice({ jobs: [job], hooks: { beforeEnqueue: () => Promise.reject(new Error('veto')) } })
    await expect(env.sluice.enqueue(job, {})).rejects.toThrow('veto')
    expect(env.statements.count).toBe(0)
  })
})

describe('onJob', () => {
  test('sees every run with its outcome, and a throwing callback changes nothing', async () => {
    const job = defineJob({
      name: 'reported',
      input: z.object({ mode: z.enum(['ok', 'flaky', 'fatal']) }),
      retry: { maxAttempts: 2, baseDelayMs: 0, jitter: 0 },
      run: (input) => {
        if (input.mode === 'flaky') throw new Error('flaked')
        if (input.mode === 'fatal') throw new PermanentJobError('gone')
      },
    })
    const fatal: unknown[] = []
    env = await makeSluice({ jobs: [job], hooks: { onFatalError: (e) => void fatal.push(e) } })
    const ok = await env.sluice.enqueue(job, { mode: 'ok' })
    const flaky = await env.sluice.enqueue(job, { mode: 'flaky' })
    const dead = await env.sluice.enqueue(job, { mode: 'fatal' })
    const runs: JobRun[] = []
    const summary = await env.sluice.drain({
      concurrency: 1,
      onJob: (run) => {
        runs.push(run)
        throw new Error('logger broke')
      },
    })
    expect(summary).toMatchObject({ completed: 1, retried: 1, deadLettered: 1 })
    const byId = new Map(runs.map((r) => [r.id, r]))
    expect(byId.get(ok.id!)).toMatchObject({
      name: 'reported',
      queue: 'default',
      attempt: 1,
      outcome: 'completed',
    })
    expect(byId.get(flaky.id!)).toMatchObject({
      outcome: 'retrying',
      retryInMs: 0,
      maxAttempts: 2,
      error: { message: 'flaked' },
    })
    expect(byId.get(dead.id!)).toMatchObject({
      outcome: 'dead-lettered',
      error: { name: 'PermanentJobError' },
    })
    expect(runs.every((r) => r.durationMs >= 0)).toBe(true)
    expect(fatal).toHaveLength(3)
    await expect(env.sluice.drain({ onJob: 'nope' as never })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    })
  })
})
