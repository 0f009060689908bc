import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('a step that ends as the deadline stops its run', () => {
  test.each([
    ['ctx.step', false],
    ['ctx.step.transaction', true],
  ])(
    '%s: recorded and counted as progress, or neither; never recorded with the attempt counted',
    async (_, transactional) => {
      let runs = 0
      const job = defineJob({
        name: 'cut',
        input: z.object({}),
        retry: { maxAttempts: 1 },
        run: async (_input, ctx) => {
          runs++
          // The step finishes when the deadline aborts the run's signal, as a well-behaved one does.
          const atAbort = () =>
            new Promise<string>((resolve) => ctx.signal.addEventListener('abort', () => resolve('stopped')))
          const value = transactional
            ? await ctx.step.transaction('only', () => atAbort())
            : await ctx.step('only', atAbort)
          return value
        },
      })
      env = await makeSluice({ jobs: [job] })
      const id = (await env.sluice.enqueue(job, {})).id!
      const first = await env.sluice.drain({ budgetMs: 500 })
      // Its one step completed in that run: the job is put back, its only attempt not used up.
      expect(first).toMatchObject({ claimed: 1, failed: 0 })
      expect(await env.sluice.deadLetters.list()).toEqual([])
      const steps = await env.sql<{ state: string }>(
        'SELECT state FROM $schema.job_steps WHERE job_id = $1',
        [id],
      )
      expect(steps).toEqual([{ state: 'completed' }])
      // The next run finds the step done and completes without running it again.
      await env.sluice.drain({ budgetMs: 5_000 })
      expect(runs).toBe(2)
      expect(await env.sluice.result(id)).toMatchObject({ state: 'completed', result: 'stopped' })
    },
  )
})

describe('a job longer than any drain', () => {
  test('20 steps of 400 ms, drained by 1 s drains: completes, each transactional effect exactly once', async () => {
    let runs = 0
    const job = defineJob({
      name: 'twenty-steps',
      input: z.object({}),
      run: async (_input, ctx) => {
        runs++
        for (let i = 0; i < 20; i++) {
          await ctx.step.transaction(`s${i}`, async (tx) => {
            await tx.query({ text: `INSERT INTO ${env!.schema}.effects (step) VALUES ($1)`, values: [i] })
            await pause(400)
            return i
          })
        }
        return 'done'
      },
    })
    env = await makeSluice({ jobs: [job] })
    await env.sql('CREATE TABLE $schema.effects (step int NOT NULL)')
    const { id } = await env.sluice.enqueue(job, {})
    let drains = 0
    while ((await env.sql('SELECT 1 FROM $schema.archive WHERE id = $1', [id])).length === 0) {
      const summary = await env.sluice.drain({ budgetMs: 1_000 })
      if (++drains > 100)
        throw new Error(
          `the job never completed: ${JSON.stringify(summary)} ${JSON.stringify(await env.sql('SELECT * FROM $schema.jobs'))}`,
        )
    }
    // Many runs, none counted as a failed attempt: each stopped at the deadline after progress.
    expect(runs).toBeGreaterThan(5)
    expect(await env.sql('SELECT attempts FROM $schema.archive WHERE id = $1', [id])).toEqual([
      { attempts: 1 },
    ])
    const effects = await env.sql<{ step: number; n: number }>(
      'SELECT step, count(*)::int AS n FROM $schema.effects GROUP BY step ORDER BY step',
    )
    expect(effects).toEqual(Array.from({ length: 20 }, (_, step) => ({ step, n: 1 })))
    expect(await env.sluice.deadLetters.list()).toEqual([])
  }, 120_000)

  test('with ctx.step, an effect runs at most once more per crash between the effect and its record', async () => {
    const effects = new Map<number, number>()
    const crashes = new Set([3, 11, 17])
    let crashed = 0
    const job = defineJob({
      name: 'crashy-steps',
      input: z.object({}),
      retry: { maxAttempts: 10, baseDelayMs: 0, jitter: 0 },
      run: async (_input, ctx) => {
        for (let i = 0; i < 20; i++) {
          await ctx.step(`s${i}`, async () => {
            effects.set(i, (effects.get(i) ?? 0) + 1)
            await pause(100)
            // A crash after the effect, before its record: the step runs again.
            if (crashes.delete(i)) {
              crashed++
              throw new Error('crash')
            }
            return i
          })
        }
      },
    })
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueue(job, {})
    for (let drains = 0; (await env.sql('SELECT 1 FROM $schema.archive')).length === 0; drains++) {
      if (drains > 100) throw new Error('the job never completed')
      await env.sluice.drain({ budgetMs: 1_000 })
    }
    expect(crashed).toBe(3)
    const extra = [...effects.values()].reduce((a, b) => a + b, 0) - 20
    // At most once more per crash; and the deadline's stops may add one each at most, for the step
    // it cut (its record was refused once the job was put back).
    expect(extra).toBeGreaterThanOrEqual(3)
    for (const [step, n] of effects) expect(n, `step ${step}`).toBeLessThanOrEqual(3)
  }, 120_000)

  test('a step longer than every drain fails with a clear error after its attempts, not for ever', async () => {
    const job = defineJob({
      name: 'too-long-step',
      input: z.object({}),
      retry: { maxAttempts: 2, baseDelayMs: 0, jitter: 0 },
      run: async (_input, ctx) => {
        await ctx.step('quick', () => 1)
        await ctx.step('endless', async () => {
          await pause(3_000)
        })
      },
    })
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueue(job, {})
    for (let drains = 0; (await env.sluice.deadLetters.list()).length === 0; drains++) {
      if (drains > 20) throw new Error('never dead-lettered')
      await env.sluice.drain({ budgetMs: 500 })
    }
    const [dead] = await env.sluice.deadLetters.list()
    expect(dead?.lastError).toMatchObject({ code: 'DRAIN_DEADLINE' })
    expect(dead?.lastError?.message).toContain('in step "endless"')
  }, 60_000)
})
