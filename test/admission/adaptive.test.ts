/**
 * Adaptive concurrency: the cap a partition admits up to moves with what settles report (the
 * lag from admission to start, failures, a handler's SlowDownError), within [min, max]; and a
 * "slow down" stops admission in its partition until its delay has passed.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, SlowDownError } from '../../src/index.js'
import { type Completion, type Failure, settle } from '../../src/sql/index.js'
import { logAdmissions } from '../helpers/admissions.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { sleep } from '../helpers/overlap.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

interface Claimed {
  id: string
  token: string
}

/** Claims through the claim function, as a drain does: as many jobs as the gates allow, up to `limit`. */
async function claim(limit = 100): Promise<Claimed[]> {
  return env!.sql<Claimed & Record<string, unknown>>(
    `SELECT id, token FROM $schema.claim(ARRAY['default'], $1, 60000, 'inv-adaptive', 0, 0) WHERE id IS NOT NULL`,
    [limit],
  )
}

const ok = (job: Claimed, lagMs: number): Completion => ({
  id: job.id,
  token: job.token,
  status: 'completed',
  durationMs: 5,
  waitMs: 0,
  lagMs,
})

const failed = (job: Claimed, lagMs: number): Failure => ({
  id: job.id,
  token: job.token,
  error: { name: 'Error', message: 'downstream failed' },
  delayMs: 3_600_000,
  final: false,
  durationMs: 5,
  waitMs: 0,
  lagMs,
})

/** One settle statement, as a drain sends it. */
async function settled(completions: Completion[], failures: Failure[] = []): Promise<void> {
  const statement = settle(`"${env!.schema}"`, { completions, failures, handBacks: [] })
  await env!.admin.query(statement.text, statement.values as unknown[])
}

async function partition(): Promise<{ cap: number; ewma: number | null }> {
  const [row] = await env!.sql<{ cap: number; ewma: number | null }>(
    `SELECT adaptive_cap AS cap, ewma_lag_ms AS ewma FROM $schema.partitions`,
  )
  return row!
}

test('lag over target shrinks the cap, a failure halves it, never under min; once lag is gone +1 per fast success, never over max', async () => {
  const job = defineJob({
    name: 'adaptive-sql',
    input: z.object({ n: z.number() }),
    admission: { adaptive: { min: 2, max: 12, initial: 8, targetLagMs: 100 } },
    run: () => {},
  })
  // No circuit breaker: the failures settled here would otherwise hold the queue.
  env = await makeSluice({ jobs: [job], circuitBreaker: false })
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: 300 }, (_, n) => ({ n })),
  )
  expect(await partition()).toEqual({ cap: 8, ewma: null })

  // The claim admits up to the cap, floored.
  let batch = await claim()
  expect(batch).toHaveLength(8)

  // Lag of 400 ms (target 100): each settle multiplies the cap by 0.95, and the claims follow.
  const shrinking: { cap: number; admitted: number }[] = []
  for (let i = 0; i < 3; i++) {
    await settled(batch.map((j) => ok(j, 400)))
    const { cap, ewma } = await partition()
    expect(ewma).toBeCloseTo(400, 6)
    batch = await claim()
    shrinking.push({ cap, admitted: batch.length })
  }
  expect(shrinking.map((s) => s.cap)).toEqual(
    [8 * 0.95, 8 * 0.95 ** 2, 8 * 0.95 ** 3].map((c) => expect.closeTo(c, 9)),
  )
  expect(shrinking.map((s) => s.admitted)).toEqual([7, 7, 6])

  // A failure halves it (once per settle), whatever else the settle holds.
  const [first, ...rest] = batch
  await settled(
    rest.map((j) => ok(j, 400)),
    [failed(first!, 400)],
  )
  expect((await partition()).cap).toBeCloseTo((8 * 0.95 ** 3) / 2, 9)
  batch = await claim()
  expect(batch).toHaveLength(3)

  // Halved again it would be 1.71: it stays at min (2), and so do the claims.
  await settled(
    [],
    batch.map((j) => failed(j, 400)),
  )
  expect((await partition()).cap).toBe(2)
  batch = await claim()
  expect(batch).toHaveLength(2)
  await settled(
    [],
    batch.map((j) => failed(j, 400)),
  )
  expect((await partition()).cap).toBe(2)

  // The lag is gone. While the EWMA is still over target the cap does not grow (×0.95, held at
  // min); once it is within target each fast success adds 1, up to max.
  const trace: { cap: number; ewma: number; admitted: number }[] = []
  batch = await claim()
  for (let i = 0; i < 8; i++) {
    await settled(batch.map((j) => ok(j, 0)))
    const { cap, ewma } = await partition()
    const before = trace.at(-1)?.cap ?? 2
    if (ewma! > 100) expect(cap, `settle ${i}: EWMA ${ewma} over target`).toBe(2)
    else expect(cap, `settle ${i}: ${batch.length} fast successes`).toBe(Math.min(12, before + batch.length))
    batch = await claim()
    expect(batch).toHaveLength(Math.floor(cap))
    trace.push({ cap, ewma: ewma!, admitted: batch.length })
  }
  console.info('recovery', trace)
  // It went through each phase: held at min, then growing, then at max.
  expect(trace.filter((t) => t.ewma > 100).length).toBeGreaterThan(0)
  expect(trace.map((t) => t.cap)).toContain(4)
  expect(trace.at(-1)!.cap).toBe(12)
  expect(Math.max(...trace.map((t) => t.cap))).toBe(12)
}, 30_000)

test('SlowDownError halves the cap and admits nothing in its partition before slow_until; other partitions go on', async () => {
  const ran: { p: string; n: number }[] = []
  let slowedDown = false
  const job = defineJob({
    name: 'adaptive-slow',
    input: z.object({ p: z.string(), n: z.number() }),
    admission: { partition: (i) => i.p, adaptive: { min: 1, max: 10, initial: 6 } },
    run: (input) => {
      if (input.p === 's' && !slowedDown) {
        slowedDown = true
        throw new SlowDownError('429 from downstream', { retryAfterMs: 3_000 })
      }
      ran.push(input)
    },
  })
  env = await makeSluice({ jobs: [job] })
  await logAdmissions(env)
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: 5 }, (_, n) => ({ p: 's', n })),
  )
  // The first drain runs one job of s: it asks to slow down.
  expect(await env.sluice.drain({ batchSize: 1, maxJobs: 1 })).toMatchObject({ claimed: 1, retried: 1 })
  const [row] = await env.sql<{ cap: number; slow_until: Date; ahead_ms: number }>(
    `SELECT adaptive_cap AS cap, slow_until, (extract(epoch FROM slow_until - now()) * 1000)::float8 AS ahead_ms
     FROM $schema.partitions WHERE partition_key = 's'`,
  )
  expect(row!.cap).toBe(3)
  expect(row!.slow_until).not.toBeNull()
  expect(row!.ahead_ms).toBeGreaterThan(0)
  expect(row!.ahead_ms).toBeLessThanOrEqual(3_000)
  // Another partition is not slowed down.
  await env.sluice.enqueue(job, { p: 'other', n: 0 })

  let completed = 0
  let emptyDrains = 0
  for (let i = 0; i < 400 && completed < 6; i++) {
    const s = await env.sluice.drain()
    completed += s.completed
    if (s.claimed === 0) {
      emptyDrains++
      await sleep(25)
    }
  }
  expect(completed).toBe(6)
  expect(emptyDrains).toBeGreaterThan(0)
  expect(
    ran
      .filter((r) => r.p === 's')
      .map((r) => r.n)
      .sort(),
  ).toEqual([0, 1, 2, 3, 4])
  // Every later admission in s was decided at or after slow_until; the other partition's was not held.
  const log = await env.sql<{ partition_key: string; claimed_at: Date }>(
    `SELECT partition_key, claimed_at FROM $schema.admission_log ORDER BY seq`,
  )
  const laterInS = log.filter((l) => l.partition_key === 's').slice(1)
  expect(laterInS).toHaveLength(5)
  for (const l of laterInS) expect(l.claimed_at.getTime()).toBeGreaterThanOrEqual(row!.slow_until.getTime())
  const other = log.find((l) => l.partition_key === 'other')!
  expect(other.claimed_at.getTime()).toBeLessThan(row!.slow_until.getTime())
}, 30_000)
