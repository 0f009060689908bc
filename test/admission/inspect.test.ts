/**
 * inspect.policies() and inspect.partitions(): the counts, the gates' state, and each reason a
 * partition's next waiting job is not running, on partitions seeded in exactly that state.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { PartitionRow } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { type RowFactory, rowFactory } from '../helpers/rows.js'

let t: TestSluice
let rows: RowFactory
beforeAll(async () => {
  t = await makeSluice({ jobs: [] })
  rows = rowFactory(t.admin, `"${t.schema}"`)
})
afterAll(() => t.cleanup())

const ISO = /(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/

/** The moment a reason names, in ms since the epoch. */
const named = (reason: string | null): number => Date.parse(ISO.exec(reason ?? '')?.[1] ?? 'none')

async function partitionsOf(policy: string): Promise<Record<string, PartitionRow>> {
  t.statements.reset()
  const list = await t.sluice.inspect.partitions(policy)
  expect(t.statements.count).toBe(1)
  return Object.fromEntries(list.map((p) => [p.partition, p]))
}

describe('inspect.partitions: one reason per gate', () => {
  // Policy "send" on queue "default": one partition per partition-level state.
  beforeAll(async () => {
    const p = { policy: 'send' }
    const job = (partitionKey: string, extra: Parameters<RowFactory['job']>[0] = {}) =>
      rows.job({ queue: 'default', name: 'send', policy: 'send', partitionKey, ...extra })

    await rows.partition({ ...p, partitionKey: 'idle' })
    await rows.partition({ ...p, partitionKey: 'open', rate: 5, perMs: 1_000, maxInFlight: 3 })
    await job('open')

    // 0.77 tokens at 1 per 100 s: the next whole token in 23 s (less the time since the seed).
    await rows.partition({ ...p, partitionKey: 'throttled', rate: 1, perMs: 100_000, burst: 3, tokens: 0.77 })
    await job('throttled')

    await rows.partition({ ...p, partitionKey: 'at-cap', maxInFlight: 2 })
    await rows.leased('inv-1', { queue: 'default', name: 'send', policy: 'send', partitionKey: 'at-cap' })
    await rows.leased('inv-1', { queue: 'default', name: 'send', policy: 'send', partitionKey: 'at-cap' })
    await job('at-cap')

    await rows.partition({ ...p, partitionKey: 'override-0', maxInFlight: 10, capOverride: 0 })
    await job('override-0')

    await rows.partition({ ...p, partitionKey: 'paused', paused: true, rate: 1, perMs: 600_000, tokens: 0 })
    await job('paused')

    await rows.partition({
      ...p,
      partitionKey: 'slowed',
      slowForMs: 60_000,
      rate: 1,
      perMs: 600_000,
      tokens: 0,
    })
    await job('slowed')

    // Slowed down for a minute, its only job due in an hour: the job's due time is what waits.
    await rows.partition({ ...p, partitionKey: 'slowed-not-due', slowForMs: 60_000 })
    await job('slowed-not-due', { dueInMs: 3_600_000 })
    // Slowed down for two hours, its job due in one: the slow-down is what waits.
    await rows.partition({ ...p, partitionKey: 'slowed-past-due', slowForMs: 7_200_000 })
    await job('slowed-past-due', { dueInMs: 3_600_000 })

    await rows.partition({ ...p, partitionKey: 'not-due', rate: 1, perMs: 600_000, tokens: 0 })
    await job('not-due', { dueInMs: 3_600_000 })
    await job('not-due', { dueInMs: 1_800_000 })

    // Throttled and at its cap: the throttle is met first.
    await rows.partition({
      ...p,
      partitionKey: 'throttled-at-cap',
      rate: 1,
      perMs: 600_000,
      tokens: 0,
      maxInFlight: 1,
    })
    await rows.leased('inv-1', {
      queue: 'default',
      name: 'send',
      policy: 'send',
      partitionKey: 'throttled-at-cap',
    })
    await job('throttled-at-cap')

    // An adaptive partition: its cap is the adaptive one, under its concurrency.
    await rows.partition({
      ...p,
      partitionKey: 'adaptive',
      maxInFlight: 8,
      adaptiveMin: 1,
      adaptiveMax: 10,
      targetLagMs: 500,
      adaptiveCap: 4.6,
      ewmaLagMs: 250,
    })
  })

  test('a partition with nothing waiting and one admissible now have no reason', async () => {
    const all = await partitionsOf('send')
    expect(all.idle).toMatchObject({ pending: 0, inFlight: 0, reason: null, tokens: null, cap: null })
    expect(all.open).toMatchObject({ pending: 1, inFlight: 0, cap: 3, paused: false, reason: null })
    expect(all.open!.tokens).toBe(5)
    expect(all.open!.msUntilNextToken).toBeNull()
  })

  test('throttled: tokens and the wait for the next one', async () => {
    const row = (await partitionsOf('send')).throttled!
    expect(row.tokens).toBeGreaterThanOrEqual(0.77)
    expect(row.tokens).toBeLessThan(1)
    expect(row.msUntilNextToken).toBeGreaterThan(0)
    expect(row.msUntilNextToken).toBeLessThanOrEqual(23_000)
    expect(row.reason).toMatch(/^throttled: next token in \d+\.\d s$/)
    const shown = Number(/in (\d+\.\d) s/.exec(row.reason!)![1])
    expect(shown).toBeCloseTo(Math.ceil(row.msUntilNextToken! / 100) / 10, 5)
    expect(shown).toBeLessThanOrEqual(23)
    expect((await partitionsOf('send'))['throttled-at-cap']!.reason).toMatch(/^throttled: next token in/)
  })

  test('at its cap, from concurrency or from an override of 0', async () => {
    const all = await partitionsOf('send')
    expect(all['at-cap']).toMatchObject({
      pending: 1,
      inFlight: 2,
      cap: 2,
      reason: 'partition at its cap 2/2',
    })
    expect(all['override-0']).toMatchObject({ cap: 0, capOverride: 0, reason: 'partition at its cap 0/0' })
    expect(all.adaptive).toMatchObject({ cap: 4, adaptiveCap: 4.6, ewmaLagMs: 250, reason: null })
  })

  test('paused and slowed down come before the throttle; a slow-down past the due time before it', async () => {
    const all = await partitionsOf('send')
    expect(all.paused).toMatchObject({ paused: true, reason: 'partition paused' })
    const slowed = all.slowed!
    expect(slowed.reason).toMatch(/^slowed down until /)
    expect(named(slowed.reason)).toBe(new Date(slowed.slowUntil!).getTime())
    expect(all['slowed-not-due']!.reason).toMatch(/^not due until /)
    expect(all['slowed-past-due']!.reason).toMatch(/^slowed down until /)
  })

  test('not due: the earliest waiting job', async () => {
    const row = (await partitionsOf('send'))['not-due']!
    expect(row.pending).toBe(2)
    const [due] = await t.sql<{ at: Date }>(
      `SELECT min(run_at) AS at FROM $schema.jobs WHERE partition_key = 'not-due'`,
    )
    expect(row.reason).toMatch(/^not due until /)
    expect(Math.abs(named(row.reason) - due!.at.getTime())).toBeLessThan(1)
  })

  test('counts: waiting jobs are due, scheduled or back from a lapsed lease; running ones hold a live lease', async () => {
    await rows.partition({ policy: 'count', partitionKey: 'k', queue: 'counted' })
    const job = { queue: 'counted', name: 'count', policy: 'count', partitionKey: 'k' }
    await rows.job(job)
    await rows.scheduled(job)
    await rows.leased('inv-2', { ...job, expiresInMs: -1_000 })
    await rows.leased('inv-2', job)
    await rows.exhausted(job)
    const [k] = await t.sluice.inspect.partitions('count')
    expect(k).toMatchObject({ partition: 'k', pending: 3, inFlight: 1, reason: null })
    expect(k!.lastEnqueuedAt).toBeInstanceOf(Date)
    expect(k!.lastAdmittedAt).toBeNull()
  })

  test('queue-level gates come first: paused, breaker, held, its global cap', async () => {
    const policy = async (name: string, queue: string, partitionKey = 'x') => {
      await rows.partition({ policy: name, partitionKey, queue, paused: true })
      await rows.job({ queue, name, policy: name, partitionKey })
    }
    await rows.queue({ name: 'q-paused', paused: true })
    await policy('on-paused', 'q-paused')
    // Nothing waits there: no reason, whatever the queue's state.
    await rows.partition({ policy: 'on-paused', partitionKey: 'empty', queue: 'q-paused' })
    await rows.leased('inv-3', {
      queue: 'q-paused',
      name: 'on-paused',
      policy: 'on-paused',
      partitionKey: 'empty',
    })
    await rows.queue({ name: 'q-tripped', breakerThreshold: 3, trips: 1, breakerOpenForMs: 60_000 })
    await policy('on-tripped', 'q-tripped')
    await rows.queue({ name: 'q-held', singleConsumer: true, heldForMs: 60_000 })
    await policy('on-held', 'q-held')
    await rows.queue({ name: 'q-capped', globalCap: 1 })
    await rows.partition({ policy: 'on-capped', partitionKey: 'x', queue: 'q-capped' })
    await rows.job({ queue: 'q-capped', name: 'on-capped', policy: 'on-capped', partitionKey: 'x' })
    await rows.leased('inv-3', { queue: 'q-capped' })

    const onPaused = await partitionsOf('on-paused')
    expect(onPaused.x!.reason).toBe('queue paused')
    expect(onPaused.empty).toMatchObject({ pending: 0, inFlight: 1, reason: null })
    const [state] = await t.sql<{ breaker: Date; held: Date }>(
      `SELECT (SELECT breaker_until FROM $schema.queues WHERE name = 'q-tripped') AS breaker,
              (SELECT held_until FROM $schema.queues WHERE name = 'q-held') AS held`,
    )
    const tripped = (await partitionsOf('on-tripped')).x!.reason
    expect(tripped).toMatch(/^breaker open until /)
    expect(Math.abs(named(tripped) - state!.breaker.getTime())).toBeLessThan(1)
    const held = (await partitionsOf('on-held')).x!.reason
    expect(held).toMatch(/^queue held until /)
    expect(Math.abs(named(held) - state!.held.getTime())).toBeLessThan(1)
    expect((await partitionsOf('on-capped')).x!.reason).toBe('queue at its global cap 1/1')
  })

  test("the policy's global cap, once a partition is past its own gates", async () => {
    await rows.policy({ name: 'capped', queue: 'gq', globalMax: 2 })
    await rows.partition({ policy: 'capped', partitionKey: 'busy', queue: 'gq' })
    await rows.partition({ policy: 'capped', partitionKey: 'waiting', queue: 'gq', maxInFlight: 5 })
    const job = { queue: 'gq', name: 'capped', policy: 'capped' }
    await rows.leased('inv-4', { ...job, partitionKey: 'busy' })
    await rows.leased('inv-4', { ...job, partitionKey: 'busy' })
    await rows.job({ ...job, partitionKey: 'waiting' })
    const all = await partitionsOf('capped')
    expect(all.busy).toMatchObject({ pending: 0, inFlight: 2, reason: null })
    expect(all.waiting).toMatchObject({ pending: 1, inFlight: 0, cap: 5, reason: 'global cap 2/2' })
  })

  test('pages in key order; an unknown policy has none; bad arguments are refused', async () => {
    const keys = (await t.sluice.inspect.partitions('send', { limit: 1000 })).map((p) => p.partition)
    expect(keys).toEqual([...keys].sort())
    const page = await t.sluice.inspect.partitions('send', { limit: 3, offset: 2 })
    expect(page.map((p) => p.partition)).toEqual(keys.slice(2, 5))
    expect(await t.sluice.inspect.partitions('nobody')).toEqual([])
    await expect(t.sluice.inspect.partitions('')).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    await expect(t.sluice.inspect.partitions('send', { limit: 0 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    })
    await expect(t.sluice.inspect.partitions('send', { offset: -1 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    })
  })
})

describe('inspect.policies', () => {
  test('every policy with its counts, in one statement', async () => {
    await rows.policy({ name: 'pol', queue: 'pq2', globalMax: 7 })
    await rows.partition({ policy: 'pol', partitionKey: 'a', queue: 'pq2', paused: true })
    await rows.partition({ policy: 'pol', partitionKey: 'b', queue: 'pq2' })
    await rows.partition({ policy: 'pol', partitionKey: 'c', queue: 'pq2', paused: true })
    const job = { queue: 'pq2', name: 'pol', policy: 'pol' }
    await rows.job({ ...job, partitionKey: 'a' })
    await rows.scheduled({ ...job, partitionKey: 'b' })
    await rows.leased('inv-5', { ...job, partitionKey: 'b' })
    t.statements.reset()
    const all = await t.sluice.inspect.policies()
    expect(t.statements.count).toBe(1)
    expect(all.map((p) => p.name)).toEqual([...all.map((p) => p.name)].sort())
    expect(all.find((p) => p.name === 'pol')).toEqual({
      name: 'pol',
      queue: 'pq2',
      globalMax: 7,
      partitions: 3,
      pending: 2,
      inFlight: 1,
      pausedPartitions: 2,
    })
  })
})
