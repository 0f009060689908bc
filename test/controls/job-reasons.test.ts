/**
 * inspect.jobs() and inspect.job(): every job's `reason`, one job per cause. Jobs are put in
 * their state by the API wherever it can (enqueue, drain, pause, partition controls); the
 * states only maintenance or a failing drain reach (an open breaker, a held queue, a lease of
 * another invocation) are seeded as rows.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import * as z from 'zod'
import { defineJob, type JobDetail } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { type RowFactory, rowFactory } from '../helpers/rows.js'

const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z'
const input = z.object({ p: z.string().default('x') })

let release: () => void = () => {}
const gate = new Promise<void>((resolve) => {
  release = resolve
})

const plain = defineJob({ name: 'plain', queue: 'plain', input, run: async () => {} })
const paused = defineJob({ name: 'paused', queue: 'paused', input, run: async () => {} })
const flaky = defineJob({
  name: 'flaky',
  queue: 'flaky',
  input,
  retry: { maxAttempts: 3, baseDelayMs: 3_600_000, jitter: 0 },
  run: async () => {
    throw new Error('boom')
  },
})
const busy = defineJob({ name: 'busy', queue: 'busy', input, timeout: 60_000, run: () => gate })
const limited = defineJob({
  name: 'limited',
  queue: 'limited',
  input,
  concurrency: { limit: 1, key: () => 'account:1' },
  run: async () => {},
})
const tenant = defineJob({
  name: 'tenant',
  queue: 'tenant',
  input,
  admission: { partition: (i) => i.p, throttle: { rate: 1, per: 3_600_000 } },
  run: async () => {},
})

let t: TestSluice
let rows: RowFactory
beforeAll(async () => {
  t = await makeSluice({ jobs: [plain, paused, flaky, busy, limited, tenant] })
  rows = rowFactory(t.admin, `"${t.schema}"`)
})
afterAll(async () => {
  release()
  await t.cleanup()
})

async function reasonOf(id: string | null): Promise<string | null> {
  const job = await t.sluice.inspect.job(id!)
  expect(job).not.toBeNull()
  return job!.reason
}

/** Polls inspect.job until `accept` holds, for at most 20 s. */
async function jobWhen(id: string, accept: (row: JobDetail | null) => boolean): Promise<JobDetail | null> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const row = await t.sluice.inspect.job(id)
    if (accept(row) || Date.now() > deadline) return row
    await new Promise((r) => setTimeout(r, 50))
  }
}

test('a ready job has no reason; a delayed one is not due until its time', async () => {
  const ready = await t.sluice.enqueue(plain, {})
  const later = await t.sluice.enqueue(plain, {}, { delay: 3_600_000 })
  expect(await reasonOf(ready.id)).toBeNull()
  const job = await t.sluice.inspect.job(later.id!)
  expect(job!.reason).toBe(`not due until ${new Date(job!.runAt).toISOString()}`)
})

test('a failed job is retrying at its next attempt, numbered', async () => {
  const { id } = await t.sluice.enqueue(flaky, {})
  await t.sluice.drain({ queues: ['flaky'] })
  const job = await t.sluice.inspect.job(id!)
  expect(job).toMatchObject({ state: 'retrying', attempts: 1 })
  expect(job!.reason).toBe(`retrying at ${new Date(job!.runAt).toISOString()} (attempt 2 of 3)`)
})

test('a running job names the end of its lease', async () => {
  const { id } = await t.sluice.enqueue(busy, {})
  const draining = t.sluice.drain({ queues: ['busy'], budgetMs: 30_000 })
  const running = await jobWhen(id!, (row) => row?.state === 'running')
  expect(running!.reason).toMatch(new RegExp(`^running \\(lease until ${ISO}\\)$`))
  release()
  await draining
})

test('queue paused (by the pause control)', async () => {
  const { id } = await t.sluice.enqueue(paused, {})
  await t.sluice.pause('paused')
  expect(await reasonOf(id)).toBe('queue paused')
})

test('a job over its concurrency limit is listed as blocked behind its key', async () => {
  await t.sluice.enqueue(limited, {})
  const second = await t.sluice.enqueue(limited, {})
  const listed = await t.sluice.inspect.jobs({ queue: 'limited', state: 'blocked' })
  expect(listed.map((j) => [j.id, j.state, j.reason])).toEqual([
    [second.id, 'blocked', 'blocked behind key account:1 (1 of 1 slots taken)'],
  ])
  expect(await reasonOf(second.id)).toBe('blocked behind key account:1 (1 of 1 slots taken)')
})

test("an admission policy's partitions: throttled, paused, at its cap (controls and a drain)", async () => {
  await t.sluice.enqueue(tenant, { p: 'throttled' })
  const throttled = await t.sluice.enqueue(tenant, { p: 'throttled' })
  const pausedPart = await t.sluice.enqueue(tenant, { p: 'paused' })
  const capped = await t.sluice.enqueue(tenant, { p: 'capped' })
  await t.sluice.pausePartition('tenant', 'paused')
  await t.sluice.setPartitionCap('tenant', 'capped', 0)
  // The drain spends the throttled partition's one token.
  await t.sluice.drain({ queues: ['tenant'] })
  expect(await reasonOf(throttled.id)).toMatch(/^throttled: next token in \d+(\.\d)? (s|min)$/)
  expect(await reasonOf(pausedPart.id)).toBe('partition paused')
  expect(await reasonOf(capped.id)).toBe('partition at its cap 0/0')
})

test('the states only maintenance or another drain reaches, seeded as rows', async () => {
  const breaker = await rows.behindOpenBreaker('broken', 60_000)
  const held = await rows.queue({ name: 'held', heldForMs: 60_000 }).then(() => rows.job({ queue: 'held' }))
  const single = await rows.inHeldSingleConsumer('single', 'inv-holder')
  const { waiting: exclusive, holder } = await rows.exclusiveBlocked('report:7', 'inv-x', { queue: 'excl' })
  const exhausted = await rows.job({ queue: 'plain', attempts: 3, maxAttempts: 3 })
  await rows.queue({ name: 'qcap', globalCap: 1 })
  await rows.leased('inv-q', { queue: 'qcap' })
  const queueCapped = await rows.job({ queue: 'qcap' })
  await rows.policy({ name: 'gc', queue: 'gcq', globalMax: 1 })
  await rows.partition({ policy: 'gc', partitionKey: 'a', queue: 'gcq' })
  await rows.partition({ policy: 'gc', partitionKey: 'b', queue: 'gcq' })
  await rows.leased('inv-g', { queue: 'gcq', name: 'gc', policy: 'gc', partitionKey: 'a' })
  const globalCapped = await rows.job({ queue: 'gcq', name: 'gc', policy: 'gc', partitionKey: 'b' })
  await rows.partition({ policy: 'gc', partitionKey: 'slow', queue: 'gcq', slowForMs: 60_000 })
  const slowed = await rows.job({ queue: 'gcq', name: 'gc', policy: 'gc', partitionKey: 'slow' })

  expect(await reasonOf(breaker.id)).toMatch(new RegExp(`^breaker open until ${ISO}$`))
  expect(await reasonOf(held.id)).toMatch(new RegExp(`^queue held until ${ISO}$`))
  expect(await reasonOf(single.id)).toBe('held by single consumer inv-holder')
  expect(await reasonOf(exclusive.id)).toMatch(
    new RegExp(`^waiting for key report:7 \\(held by job ${holder.id} until ${ISO}\\)$`),
  )
  expect(await reasonOf(exhausted.id)).toBe('out of attempts: maintenance moves it to the dead letters')
  expect(await reasonOf(queueCapped.id)).toBe('queue at its global cap 1/1')
  expect(await reasonOf(globalCapped.id)).toBe('global cap 1/1')
  expect(await reasonOf(slowed.id)).toMatch(new RegExp(`^slowed down until ${ISO}$`))
})

test('a lease holds only a single-consumer queue, and only while it lasts', async () => {
  // A lapsed lease: the next drain may take the queue over, so nothing holds the job.
  await rows.queue({ name: 'single-lapsed', singleConsumer: true })
  await rows.invocation({ id: 'inv-gone', queues: ['single-lapsed'] })
  await rows.queueLease({ queue: 'single-lapsed', holder: 'inv-gone', expiresInMs: -1_000 })
  const lapsed = await rows.job({ queue: 'single-lapsed' })
  // A lease row on a queue that is not single-consumer (it was, once) holds nothing either.
  await rows.queue({ name: 'was-single', singleConsumer: false })
  await rows.invocation({ id: 'inv-old', queues: ['was-single'] })
  await rows.queueLease({ queue: 'was-single', holder: 'inv-old' })
  const plain = await rows.job({ queue: 'was-single' })
  expect(await reasonOf(lapsed.id)).toBeNull()
  expect(await reasonOf(plain.id)).toBeNull()
})

test('the list carries the same reasons as the job, in one statement', async () => {
  t.statements.reset()
  const listed = await t.sluice.inspect.jobs({ limit: 1000 })
  expect(t.statements.count).toBe(1)
  expect(listed.length).toBeGreaterThan(10)
  for (const row of listed.slice(0, 20)) {
    const one = await t.sluice.inspect.job(row.id)
    if (row.state !== 'running') expect(one!.reason).toBe(row.reason)
  }
  // Paging stays in id order across both tables.
  const ids = listed.map((j) => BigInt(j.id))
  expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
})
