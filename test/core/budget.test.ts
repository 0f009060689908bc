import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import type { Logger } from '../../src/config.js'
import { type DrainSummary, defineJob, type Sluice } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

/** Records warnings; a drain that cannot run a job must not say so on every call. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, warn: (m) => void warnings.push(m), info: () => {}, error: () => {} }
}

/** The loop a user writes; at most `cap` calls so that a loop that would never end fails the test instead. */
async function drainLoop(sluice: Sluice, budgetMs: number, cap = 10): Promise<DrainSummary[]> {
  const summaries: DrainSummary[] = []
  let s: DrainSummary
  do {
    s = await sluice.drain({ budgetMs })
    summaries.push(s)
  } while (s.claimed > 0 && summaries.length < cap)
  return summaries
}

describe('jobs never starve on defaults', () => {
  test('a drain shorter than the default 30 s timeout runs default-option jobs, and the loop ends', async () => {
    const ran: number[] = []
    // No timeout given: the default 30 s is longer than the 20 s drain.
    const job = defineJob({ name: 'default-options', input: z.number(), run: (n) => void ran.push(n) })
    const logger = recordingLogger()
    env = await makeSluice({ jobs: [job], logger })
    await env.sluice.enqueueMany(
      job,
      Array.from({ length: 30 }, (_, n) => n),
    )
    const summaries = await drainLoop(env.sluice, 20_000)
    expect(ran.sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, n) => n))
    // The last call claims nothing and ends the loop; no drain claimed a job it handed back.
    expect(summaries.at(-1)).toMatchObject({ claimed: 0, stoppedBy: 'empty' })
    expect(summaries.length).toBeLessThanOrEqual(3)
    expect(summaries.map((s) => s.handedBack)).toEqual(summaries.map(() => 0))
    expect(logger.warnings).toEqual([])
    expect(await env.sql('SELECT 1 FROM $schema.jobs')).toEqual([])
  })

  test('a 1 s budget runs them too', async () => {
    const ran: number[] = []
    const job = defineJob({ name: 'default-options-1s', input: z.number(), run: (n) => void ran.push(n) })
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueueMany(job, [1, 2, 3])
    const summaries = await drainLoop(env.sluice, 1_000)
    expect(ran.sort()).toEqual([1, 2, 3])
    expect(summaries.at(-1)).toMatchObject({ claimed: 0 })
    expect(summaries.map((s) => s.handedBack)).toEqual(summaries.map(() => 0))
  })

  test("a job whose timeout exceeds the whole budget starts with the budget ahead; its signal fires at the drain's deadline", async () => {
    const started: number[] = []
    const long = defineJob({
      name: 'longer-than-budget',
      input: z.number(),
      timeout: 60_000,
      retry: { maxAttempts: 3, baseDelayMs: 60_000, jitter: 0 },
      run: (n, ctx) =>
        new Promise((_, reject) => {
          started.push(n)
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))
        }),
    })
    env = await makeSluice({ jobs: [long], drain: { concurrency: 1 } })
    await env.sluice.enqueueMany(long, [1, 2])
    const first = await env.sluice.drain({ budgetMs: 1_500 })
    // One runs until the deadline stops it; the other is left where it is, not claimed and handed back.
    expect(started).toEqual([1])
    expect(first).toMatchObject({ claimed: 1, retried: 1, handedBack: 0, stoppedBy: 'deadline' })
    const rows = await env.sql<{ n: number; attempts: number; token: string | null; error: string | null }>(
      `SELECT payload::int AS n, attempts, lease_token AS token, last_error->>'message' AS error FROM $schema.jobs ORDER BY id`,
    )
    expect(rows).toEqual([
      { n: 1, attempts: 1, token: null, error: expect.stringMatching(/drain's deadline/) },
      { n: 2, attempts: 0, token: null, error: null },
    ])
    // The next drain starts the other one at its opening.
    expect(await env.sluice.drain({ budgetMs: 1_500 })).toMatchObject({
      claimed: 1,
      retried: 1,
      handedBack: 0,
    })
    expect(started).toEqual([1, 2])
  })

  test('a job that does not fit the time left stays in place: nothing after it is claimed and handed back', async () => {
    const ran: string[] = []
    const fast = defineJob({ name: 'fits', input: z.string(), timeout: 1_000, run: (s) => void ran.push(s) })
    // Never seen to run: its default 30 s timeout is all a drain knows of it.
    const slow = defineJob({ name: 'unknown-length', input: z.string(), run: (s) => void ran.push(s) })
    env = await makeSluice({ jobs: [fast, slow], drain: { concurrency: 2 } })
    await env.sluice.enqueueMany(fast, ['f1', 'f2'])
    await env.sluice.enqueue(slow, 's1')
    await env.sluice.enqueueMany(fast, ['f3', 'f4'])
    const first = await env.sluice.drain({ budgetMs: 5_000 })
    // The opening takes f1 and f2; then s1, at the head, cannot fit what is left, and its queue waits.
    expect(ran).toEqual(['f1', 'f2'])
    expect(first).toMatchObject({ claimed: 2, completed: 2, handedBack: 0, stoppedBy: 'deadline' })
    // The next drain opens with it.
    const summaries = await drainLoop(env.sluice, 5_000)
    expect(ran).toEqual(['f1', 'f2', 's1', 'f3', 'f4'])
    expect(summaries.map((s) => s.handedBack)).toEqual(summaries.map(() => 0))
    const attempts = await env.sql<{ attempts: number }>(`SELECT attempts FROM $schema.archive`)
    expect(attempts.map((a) => a.attempts)).toEqual([1, 1, 1, 1, 1])
  })

  test('durations the database recorded count in a process that has not seen the job yet', async () => {
    const ran: string[] = []
    const fast = defineJob({
      name: 'opener',
      input: z.string(),
      timeout: 1_000,
      run: (s) => void ran.push(s),
    })
    const known = defineJob({ name: 'known-elsewhere', input: z.string(), run: (s) => void ran.push(s) })
    env = await makeSluice({ jobs: [fast, known], drain: { concurrency: 2 } })
    // Another process ran it: 5 ms each.
    await env.sql(
      `INSERT INTO $schema.job_stats (name, queue, status, duration_ms) SELECT 'known-elsewhere', 'default', 'completed', 5 FROM generate_series(1, 3)`,
    )
    await env.sluice.enqueueMany(fast, ['o1', 'o2'])
    await env.sluice.enqueueMany(
      known,
      Array.from({ length: 20 }, (_, n) => `k${n}`),
    )
    env.statements.reset()
    const summary = await env.sluice.drain({ budgetMs: 5_000 })
    expect(summary).toMatchObject({ claimed: 22, completed: 22, handedBack: 0, stoppedBy: 'empty' })
    expect(ran).toHaveLength(22)
    // Learnt with the first claim: no statement other than claims and settles.
    expect(env.statements.events.every((e) => /claim\(|\.settle\(/.test(e.text))).toBe(true)
  })

  test('a drain that claims once at most does not read the recorded durations; the next one does', async () => {
    const job = defineJob({ name: 'single-shot', input: z.string(), run: () => {} })
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueueMany(job, ['a', 'b'])
    const readsDurations = (): boolean => env!.statements.events.some((e) => e.text.includes('job_stats'))
    env.statements.reset()
    expect(await env.sluice.drain({ maxJobs: 1 })).toMatchObject({ claimed: 1, completed: 1 })
    expect(readsDurations()).toBe(false)
    env.statements.reset()
    expect(await env.sluice.drain()).toMatchObject({ claimed: 1, completed: 1 })
    expect(readsDurations()).toBe(true)
  })
})

describe('the claim', () => {
  test('stops in each queue before the first job it is told cannot fit, keeps order, and names where it stopped', async () => {
    const job = (name: string, queue: string) => defineJob({ name, queue, input: z.string(), run: () => {} })
    const short = job('short-a', 'qa')
    const long = job('long-a', 'qa')
    const other = job('short-b', 'qb')
    const ordered = job('ordered', 'qc')
    const longOrdered = job('long-c', 'qc')
    env = await makeSluice({
      jobs: [short, long, other, ordered, longOrdered],
      queues: { qc: { singleActiveConsumer: true } },
    })
    await env.sluice.enqueue(short, 'a1')
    await env.sluice.enqueue(long, 'a2')
    await env.sluice.enqueue(short, 'a3')
    await env.sluice.enqueueMany(other, ['b1', 'b2'])
    await env.sluice.enqueue(ordered, 'c1')
    await env.sluice.enqueue(longOrdered, 'c2')
    await env.sluice.enqueue(ordered, 'c3')
    const rows = await env.sql<{ id: string | null; queue: string; name: string; payload: string | null }>(
      `SELECT id, queue, name, payload #>> '{}' AS payload
       FROM $schema.claim(ARRAY['qa', 'qb', 'qc'], 10, 60000, 'inv', 0, 0, ARRAY['long-a', 'long-c'])
       ORDER BY queue, id NULLS FIRST`,
    )
    expect(rows.map(({ id, ...r }) => ({ ...r, job: id !== null }))).toEqual([
      { queue: 'qa', name: 'long-a', payload: null, job: false },
      { queue: 'qa', name: 'short-a', payload: 'a1', job: true },
      { queue: 'qb', name: 'short-b', payload: 'b1', job: true },
      { queue: 'qb', name: 'short-b', payload: 'b2', job: true },
      { queue: 'qc', name: 'long-c', payload: null, job: false },
      { queue: 'qc', name: 'ordered', payload: 'c1', job: true },
    ])
    // What it stopped before is untouched.
    const left = await env.sql<{ payload: string }>(
      `SELECT payload #>> '{}' AS payload FROM $schema.jobs WHERE lease_token IS NULL ORDER BY id`,
    )
    expect(left.map((r) => r.payload)).toEqual(['a2', 'a3', 'c2', 'c3'])
    // Told nothing, it claims as before: no rows without a job.
    const all = await env.sql<{ id: string | null }>(
      `SELECT id FROM $schema.claim(ARRAY['qa', 'qb', 'qc'], 10, 60000, 'inv2', 0, 0)`,
    )
    expect(all.every((r) => r.id !== null)).toBe(true)
  })
})
