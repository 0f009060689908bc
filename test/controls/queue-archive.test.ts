import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const fast = defineJob({
  name: 'ping',
  queue: 'fast',
  input: z.object({ n: z.number() }),
  run: (input) => ({ pong: input.n }),
})
const kept = defineJob({
  name: 'report',
  queue: 'kept',
  input: z.object({}),
  run: () => ({ sent: true }),
})

test('a queue with archive: false ends its jobs without an archive row; the stats still count them', async () => {
  env = await makeSluice({ jobs: [fast, kept], queues: { fast: { archive: false } } })
  const pings = await env.sluice.enqueueMany(
    fast,
    Array.from({ length: 5 }, (_, n) => ({ n })),
  )
  const report = await env.sluice.enqueue(kept, {})
  expect(await env.sluice.drain()).toMatchObject({ completed: 6, failed: 0 })

  expect(await env.sql('SELECT id::text FROM $schema.archive')).toEqual([{ id: report.id }])
  expect(await env.sql('SELECT count(*)::int AS n FROM $schema.jobs')).toEqual([{ n: 0 }])
  // Nothing to read back for a job of the queue once it completed; the other queue's result is there.
  expect(await env.sluice.result(pings[0]!.id!)).toBeNull()
  expect(await env.sluice.inspect.job(pings[0]!.id!)).toBeNull()
  expect(await env.sluice.result(report.id!)).toMatchObject({ state: 'completed', result: { sent: true } })
  const stats = await env.sluice.stats({ queue: 'fast' })
  expect(stats.statusCounts.completed).toBe(5)

  const states = await env.sluice.queueStates()
  expect(states.map((s) => [s.name, s.archive])).toEqual([
    ['fast', false],
    ['kept', true],
  ])
})

test("the setting follows the code: a deploy that drops archive: false archives the queue's jobs again", async () => {
  env = await makeSluice({ jobs: [fast], queues: { fast: { archive: false } } })
  const again = createSluice({ database: databaseUrl, schema: env.schema, jobs: [fast] })
  try {
    await again.migrate()
    expect((await again.queueStates()).map((s) => s.archive)).toEqual([true])
    const { id } = await again.enqueue(fast, { n: 7 })
    expect(await again.drain()).toMatchObject({ completed: 1 })
    expect(await again.result(id!)).toMatchObject({ state: 'completed', result: { pong: 7 } })
  } finally {
    await again.close()
  }
})

test('archive takes a boolean, and the error names the queue', () => {
  expect(() =>
    createSluice({
      database: databaseUrl,
      jobs: [fast],
      // @ts-expect-error: a string is not a boolean
      queues: { fast: { archive: 'no' } },
    }),
  ).toThrow(/queues\.fast\.archive/)
})
