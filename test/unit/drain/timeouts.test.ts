/**
 * A batch's time limits on one shared timer (src/drain/execute.ts Timeouts), and execute's use of
 * it: a job past its limit is stopped through its signal and fails with JobTimeoutError, one that
 * finished in time is not, whatever the order in which the jobs of a batch start and end.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { execute, JobTimeoutError, Timeouts } from '../../../src/drain/execute.js'
import { defineJob } from '../../../src/jobs/define.js'
import { HookRunner, type Hooks } from '../../../src/jobs/hooks.js'
import type { ClaimedRow } from '../../../src/sql/index.js'

const open: Timeouts[] = []
afterEach(() => {
  for (const t of open.splice(0)) t.close()
})
const timeouts = (): Timeouts => {
  const t = new Timeouts()
  open.push(t)
  return t
}

/** Resolves once `check` holds, polling on timers (never asserts on elapsed time). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 2))
}

describe('Timeouts', () => {
  it('calls each limit once it runs out, in any order of adding, and never a cleared one', async () => {
    const t = timeouts()
    const fired: string[] = []
    const now = Date.now()
    t.add(now + 60, () => fired.push('c'))
    t.add(now + 5, () => fired.push('a'))
    const cleared = t.add(now + 10, () => fired.push('cleared'))
    t.add(now + 20, () => fired.push('b'))
    t.clear(cleared)
    await until(() => fired.length === 3)
    expect(fired).toEqual(['a', 'b', 'c'])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(fired).toEqual(['a', 'b', 'c'])
  })

  it('clearing twice, or after closing, changes nothing; close stops every limit', async () => {
    const t = timeouts()
    const fired: string[] = []
    const a = t.add(Date.now() + 5, () => fired.push('a'))
    const b = t.add(Date.now() + 5, () => fired.push('b'))
    t.clear(a)
    t.clear(a)
    t.close()
    t.clear(b)
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(fired).toEqual([])
    // Usable again after close.
    t.add(Date.now(), () => fired.push('again'))
    await until(() => fired.length === 1)
    expect(fired).toEqual(['again'])
  })
})

const row = (id: number): ClaimedRow => ({
  id: String(id),
  queue: 'default',
  name: 'sleepy',
  payload: { ms: 0 },
  priority: 16384,
  attempts: 1,
  max_attempts: 3,
  token: '6f1c8a52-0a47-4a53-9d59-0b7c1f0e6a11',
  enqueued_at: new Date(),
  due_at: new Date(),
  in_order: false,
  more: false,
  trace_context: null,
})

describe('execute on a shared timer', () => {
  const aborted: string[] = []
  const sleepy = defineJob({
    name: 'sleepy',
    input: z.object({ ms: z.number() }),
    timeout: 200,
    run: async ({ ms }, ctx) => {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        ctx.signal.addEventListener('abort', () => {
          aborted.push(ctx.id)
          clearTimeout(timer)
          resolve()
        })
      })
      return ms
    },
  })

  it('stops the jobs past their limit and only those, each through its own signal', async () => {
    const t = timeouts()
    const hooks = new HookRunner([])
    const options = { hooks, deadline: Date.now() + 60_000, timeouts: t }
    const runs = [0, 5_000, 1, 5_000, 2].map((ms, i) =>
      execute({ ...row(i + 1), payload: { ms } }, sleepy, options),
    )
    const outcomes = await Promise.all(runs)
    expect(outcomes.map((o) => o.kind)).toEqual(['completed', 'failed', 'completed', 'failed', 'completed'])
    for (const o of outcomes) {
      if (o.kind !== 'failed') continue
      expect(o.error).toBeInstanceOf(JobTimeoutError)
      expect(o.failure.error).toMatchObject({ name: 'JobTimeoutError', code: 'JOB_TIMEOUT' })
      expect(o.willRetry).toBe(true)
    }
    expect(aborted.sort()).toEqual(['2', '4'])
  })

  it("stops a job at the drain's deadline when that comes before its timeout", async () => {
    const outcome = await execute({ ...row(9), payload: { ms: 5_000 } }, sleepy, {
      hooks: new HookRunner([]),
      deadline: Date.now() + 10,
      timeouts: timeouts(),
    })
    expect(outcome.kind).toBe('failed')
    expect(outcome.kind === 'failed' && outcome.failure.error.message).toMatch(/deadline/)
  })

  it('without a shared timer, a job gets its own; hooks around the run see it as before', async () => {
    const seen: string[] = []
    const hooks: Hooks = {
      beforeExecution: () => {
        seen.push('before')
      },
      aroundExecution: async (_event, next) => {
        seen.push('around')
        return next()
      },
      afterExecution: (event) => {
        seen.push(`after ${String(event.result)}`)
      },
      onFailure: (event) => {
        seen.push(`failure ${(event.error as Error).name}`)
      },
    }
    const runner = new HookRunner([hooks])
    const ok = await execute({ ...row(1), payload: { ms: 1 } }, sleepy, {
      hooks: runner,
      deadline: Date.now() + 60_000,
    })
    expect(ok.kind).toBe('completed')
    const late = await execute({ ...row(2), payload: { ms: 5_000 } }, sleepy, {
      hooks: runner,
      deadline: Date.now() + 60_000,
    })
    expect(late.kind).toBe('failed')
    expect(seen).toEqual(['before', 'around', 'after 1', 'before', 'around', 'failure JobTimeoutError'])
  })

  it('a handler that throws at once fails the attempt with its error', async () => {
    const throws = defineJob({
      name: 'throws',
      input: z.object({}),
      run: () => {
        throw new TypeError('at once')
      },
    })
    const outcome = await execute({ ...row(1), name: 'throws', payload: {} }, throws, {
      hooks: new HookRunner([]),
      deadline: Date.now() + 60_000,
      timeouts: timeouts(),
    })
    expect(outcome.kind === 'failed' && outcome.failure.error).toEqual({
      name: 'TypeError',
      message: 'at once',
    })
  })
})

describe("execute's lag from claim to start", () => {
  it('is sent for a job whose admission policy adapts to it, and for no other', async () => {
    const run = () => {}
    const plain = defineJob({ name: 'plain', input: z.object({}), run })
    const capped = defineJob({
      name: 'capped',
      input: z.object({}),
      admission: { partition: () => 'p', concurrency: { max: 2 } },
      run,
    })
    const adapting = defineJob({
      name: 'adapting',
      input: z.object({}),
      admission: { partition: () => 'p', adaptive: { min: 1, max: 4 } },
      run,
    })
    const options = { hooks: new HookRunner([]), deadline: Date.now() + 60_000, claimedAt: Date.now() - 50 }
    const lag = async (job: typeof plain | typeof capped | typeof adapting) => {
      const outcome = await execute({ ...row(1), name: job.name, payload: {} }, job, options)
      return outcome.kind === 'completed' ? outcome.completion.lagMs : 'not completed'
    }
    expect(await lag(plain)).toBeNull()
    expect(await lag(capped)).toBeNull()
    expect(await lag(adapting)).toBeGreaterThanOrEqual(50)
  })
})
