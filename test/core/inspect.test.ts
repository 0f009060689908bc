import { afterAll, beforeAll, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const job = defineJob({ name: 'look', queue: 'seen', input: z.object({}), run: () => {} })
const admitted = defineJob({
  name: 'admitted',
  queue: 'seen',
  input: z.object({ k: z.string() }),
  admission: { partition: (i) => i.k, throttle: { rate: 1, per: 1_000 }, concurrency: { max: 2 } },
  run: () => {},
})
let env: TestSluice
beforeAll(async () => {
  env = await makeSluice({ jobs: [job, admitted] })
  await env.sluice.enqueue(job, {})
  await env.sluice.enqueue(admitted, { k: 'one' })
})
afterAll(() => env.cleanup())

test('every read of sluice.inspect is one statement', async () => {
  const { inspect } = env.sluice
  const reads: [string, () => Promise<unknown>][] = [
    ['queues', () => inspect.queues()],
    ['queueStates', () => inspect.queueStates()],
    ['status', () => inspect.status()],
    ['invocations', () => inspect.invocations()],
    ['stats', () => inspect.stats()],
    ['recurringRuns', () => inspect.recurringRuns()],
    ['batch', () => inspect.batch('1')],
    ['deadLetters', () => inspect.deadLetters()],
    ['health', () => inspect.health()],
    ['migrations', () => inspect.migrations()],
    ['policies', () => inspect.policies()],
    ['partitions', () => inspect.partitions('admitted')],
    ['scrape', () => inspect.scrape()],
  ]
  for (const [name, read] of reads) {
    env.statements.reset()
    await read()
    expect({ name, statements: env.statements.count }).toEqual({ name, statements: 1 })
  }
  const [seen] = await inspect.queues()
  expect(seen).toMatchObject({ queue: 'seen', ready: 2 })
  const status = await inspect.status()
  expect(status.version).toBeGreaterThan(0)
  expect(await inspect.invocations()).toEqual(status.invocations)
})

test('what inspect returns is camelCase, aliased in the SQL', async () => {
  await env.sluice.pause('seen')
  const rows = [
    ...(await env.sluice.inspect.queueStates()),
    ...(await env.sluice.inspect.queues()),
    await env.sluice.inspect.status(),
    ...(await env.sluice.inspect.policies()),
    ...(await env.sluice.inspect.partitions('admitted')),
    ...(await env.sluice.inspect.scrape()).partitions,
  ]
  expect(rows.length).toBeGreaterThan(5)
  for (const row of rows) for (const key of Object.keys(row)) expect(key).toMatch(/^[a-z][A-Za-z]*$/)
  expect((await env.sluice.inspect.queueStates()).find((q) => q.name === 'seen')).toMatchObject({
    paused: true,
    pausedAt: expect.any(Date),
    singleConsumer: false,
  })
})

test('the older read methods are the same reads', async () => {
  const depth = (rows: { queue: string; ready: number }[]) => rows.map((r) => [r.queue, r.ready])
  expect(depth(await env.sluice.metrics())).toEqual(depth(await env.sluice.inspect.queues()))
  expect(await env.sluice.deadLetters.list()).toEqual(await env.sluice.inspect.deadLetters())
})
