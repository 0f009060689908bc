import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { formatRun } from '../../src/cli/job-log.js'
import { defineJob, type JobRun } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

describe('ctx.step', () => {
  test('a completed step returns its stored result on a re-run, without running again', async () => {
    const runs: string[] = []
    let failOnce = true
    const job = defineJob({
      name: 'two-steps',
      input: z.object({ n: z.number() }),
      retry: { maxAttempts: 3, baseDelayMs: 0, jitter: 0 },
      run: async (input, ctx) => {
        const a = await ctx.step('a', () => {
          runs.push('a')
          return { doubled: input.n * 2, at: new Date(0) }
        })
        const b = await ctx.step('b', () => {
          runs.push('b')
          if (failOnce) {
            failOnce = false
            throw new Error('flaky')
          }
          return a.doubled + 1
        })
        return { a, b }
      },
    })
    env = await makeSluice({ jobs: [job] })
    const { id } = await env.sluice.enqueue(job, { n: 20 })
    await env.sluice.drain()
    await env.sluice.drain()
    expect(runs).toEqual(['a', 'b', 'b'])
    const [archived] = await env.sql<{ result: unknown; attempts: number }>(
      'SELECT result, attempts FROM $schema.archive WHERE id = $1',
      [id],
    )
    // The first run and the replay see the same value: the stored JSON.
    expect(archived).toEqual({
      result: { a: { doubled: 40, at: '1970-01-01T00:00:00.000Z' }, b: 41 },
      attempts: 2,
    })
    const steps = await env.sql(
      'SELECT seq, name, state, attempts, result, error FROM $schema.job_steps ORDER BY seq',
    )
    expect(steps).toEqual([
      {
        seq: 0,
        name: 'a',
        state: 'completed',
        attempts: 1,
        result: { doubled: 40, at: '1970-01-01T00:00:00.000Z' },
        error: null,
      },
      { seq: 1, name: 'b', state: 'completed', attempts: 2, result: 41, error: null },
    ])
  })

  test('a repeated name gets an occurrence index; another order on a re-run is a NonDeterminismError', async () => {
    let flip = false
    const job = defineJob({
      name: 'fickle',
      input: z.object({}),
      retry: { maxAttempts: 2, baseDelayMs: 0, jitter: 0 },
      run: async (_input, ctx) => {
        await ctx.step('x', () => 1)
        await ctx.step('x', () => 2)
        await ctx.step(flip ? 'z' : 'y', () => 3)
        flip = true
        throw new Error('again')
      },
    })
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueue(job, {})
    await env.sluice.drain()
    await env.sluice.drain()
    const [dead] = await env.sluice.deadLetters.list()
    expect(dead?.lastError).toMatchObject({ code: 'NON_DETERMINISM' })
    expect(dead?.lastError?.message).toContain('Step "z" was called at position 3')
    expect(dead?.lastError?.message).toContain('"y"')
    const names = await env.sql('SELECT name FROM $schema.job_steps ORDER BY seq')
    expect(names).toEqual([{ name: 'x' }, { name: 'x:1' }, { name: 'y' }])
  })
})

describe('a lost lease', () => {
  test('a step written after another drain took the job over is refused: nothing recorded, LEASE_LOST', async () => {
    const seen: string[] = []
    const job = defineJob({
      name: 'taken-over',
      input: z.object({}),
      retry: 1,
      run: async (_input, ctx) => {
        await ctx.step('plain', async () => {
          // Another drain takes the job over meanwhile (its lease ran out and it was claimed again).
          await env!.sql('UPDATE $schema.jobs SET lease_token = gen_random_uuid() WHERE id = $1', [ctx.id])
          return 1
        })
      },
    })
    const tx = defineJob({
      name: 'taken-over-tx',
      input: z.object({}),
      retry: 1,
      run: async (_input, ctx) => {
        await env!.sql('UPDATE $schema.jobs SET lease_token = gen_random_uuid() WHERE id = $1', [ctx.id])
        try {
          await ctx.step.transaction('write', async (t) => {
            seen.push('ran')
            await t.query({ text: `INSERT INTO ${env!.schema}.effects VALUES (1)`, values: [] })
          })
        } catch (error) {
          seen.push((error as { code?: string }).code ?? 'other')
          throw error
        }
      },
    })
    env = await makeSluice({ jobs: [job, tx] })
    await env.sql('CREATE TABLE $schema.effects (n int)')
    await env.sluice.enqueue(job, {})
    await env.sluice.enqueue(tx, {})
    const runs: [string, string | undefined][] = []
    await env.sluice.drain({
      onJob: (run) => runs.push([run.name, (run.error as { code?: string } | undefined)?.code]),
    })
    expect(runs.sort()).toEqual([
      ['taken-over', 'LEASE_LOST'],
      ['taken-over-tx', 'LEASE_LOST'],
    ])
    // The transaction's function never ran: the lease was checked first.
    expect(seen).toEqual(['LEASE_LOST'])
    expect(await env.sql('SELECT count(*)::int AS n FROM $schema.effects')).toEqual([{ n: 0 }])
    expect(await env.sql("SELECT name FROM $schema.job_steps WHERE state = 'completed'")).toEqual([])
  })
})

describe('ctx.sleep', () => {
  test('onJob reports a sleeping run as suspended, with why and until when', async () => {
    const job = defineJob({
      name: 'napper',
      input: z.object({}),
      run: async (_input, ctx) => {
        await ctx.sleep('nap', '1h')
      },
    })
    env = await makeSluice({ jobs: [job] })
    const { id } = await env.sluice.enqueue(job, {})
    const runs: JobRun[] = []
    const summary = await env.sluice.drain({ onJob: (run) => runs.push(run) })
    // The summary adds up: the job was claimed and suspended, nothing else.
    expect(summary).toMatchObject({ claimed: 1, completed: 0, failed: 0, handedBack: 0, suspended: 1 })
    const [row] = await env.sql<{ run_at: Date }>('SELECT run_at FROM $schema.jobs WHERE id = $1', [id])
    expect(runs).toEqual([
      expect.objectContaining({
        id,
        outcome: 'suspended',
        suspended: { reason: 'sleep', until: row!.run_at },
      }),
    ])
    expect(formatRun(runs[0]!, false)).toContain(
      `sleeping until ${row!.run_at.toISOString().slice(11, 19)} UTC`,
    )
  })

  test('a run waiting on what has no time limit (a child job) reports until null, not a far date', async () => {
    const child = defineJob({ name: 'kid', queue: 'kids', input: z.object({}), run: async () => 1 })
    const parent = defineJob({
      name: 'parent',
      input: z.object({}),
      run: async (_input, ctx) => ctx.invoke('kid', child, {}),
    })
    env = await makeSluice({ jobs: [parent, child] })
    await env.sluice.enqueue(parent, {})
    const runs: JobRun[] = []
    await env.sluice.drain({ queues: ['default'], onJob: (run) => runs.push(run) })
    expect(runs).toEqual([
      expect.objectContaining({ outcome: 'suspended', suspended: { reason: 'wait', until: null } }),
    ])
    expect(formatRun(runs[0]!, false)).not.toContain('9999')
  })

  test('a sleep of 2 s suspends the job, attempt uncounted, and resumes it after ≥ 2 s and within the wake-up delay', async () => {
    const runs: string[] = []
    let sleptAt = 0
    let resumedAt = 0
    const job = defineJob({
      name: 'sleeper',
      input: z.object({}),
      run: async (_input, ctx) => {
        sleptAt = await ctx.step('before', () => Date.now())
        await ctx.sleep('nap', '2s')
        resumedAt = await ctx.step('after', () => Date.now())
        runs.push('after')
        return 'rested'
      },
    })
    env = await makeSluice({ jobs: [job] })
    const { id } = await env.sluice.enqueue(job, {})
    const first = await env.sluice.drain()
    expect(first).toMatchObject({ claimed: 1, completed: 0, failed: 0 })
    const [waiting] = await env.sql<{ attempts: number; lease_token: string | null; run_at: Date }>(
      'SELECT attempts, lease_token, run_at FROM $schema.jobs WHERE id = $1',
      [id],
    )
    expect(waiting).toMatchObject({ attempts: 0, lease_token: null })
    // Not due yet: a drain now finds nothing.
    expect(await env.sluice.drain()).toMatchObject({ claimed: 0 })
    // A drain loop as a deployment's trigger runs it: every 50 ms, the wake-up delay's bound here.
    const wakeUpDelayMs = 50
    while (resumedAt === 0) {
      await env.sluice.drain()
      if (resumedAt === 0) await new Promise((r) => setTimeout(r, wakeUpDelayMs))
    }
    const slept = resumedAt - sleptAt
    expect(slept).toBeGreaterThanOrEqual(2_000)
    // The delay plus one drain's claim and run, with room for a loaded machine (a retry's
    // backoff or a lost wake-up would be far longer).
    expect(slept).toBeLessThan(2_000 + wakeUpDelayMs + 3_000)
    expect(runs).toEqual(['after'])
    expect(await env.sql('SELECT result, attempts FROM $schema.archive')).toEqual([
      { result: 'rested', attempts: 1 },
    ])
  })
})
