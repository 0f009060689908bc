import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, PermanentJobError } from '../../src/index.js'
import { makeSluice, perTestConnections, type TestSluice } from '../helpers/db.js'
import { drainAll } from '../helpers/overlap.js'

let env: TestSluice | undefined
const { connections, closeAll } = perTestConnections(() => env!.schema)
afterEach(async () => {
  await closeAll()
  await env?.cleanup()
  env = undefined
})

function setup() {
  const fired: { callback: string; properties: unknown }[] = []
  const properties = z.object({ import: z.string() })
  const onFinish = defineJob({
    name: 'import-finished',
    input: properties,
    run: (p) => void fired.push({ callback: 'onFinish', properties: p }),
  })
  const onSuccess = defineJob({
    name: 'import-succeeded',
    input: properties,
    run: (p) => void fired.push({ callback: 'onSuccess', properties: p }),
  })
  const onDiscard = defineJob({
    name: 'import-discarded',
    input: properties,
    run: (p) => void fired.push({ callback: 'onDiscard', properties: p }),
  })
  const row = defineJob({
    name: 'import-row',
    input: z.object({ n: z.number(), bad: z.boolean() }),
    retry: 1,
    run: (input) => {
      if (input.bad) throw new PermanentJobError(`row ${input.n} is malformed`)
    },
  })
  return { fired, jobs: [onFinish, onSuccess, onDiscard, row], onFinish, onSuccess, onDiscard, row }
}

test('500 jobs, some dead-lettered, 4 drains: onDiscard and onFinish fire exactly once, onSuccess never', async () => {
  const s = setup()
  env = await makeSluice({ jobs: s.jobs })
  const batch = await env.sluice.batch(
    {
      onFinish: s.onFinish,
      onSuccess: s.onSuccess,
      onDiscard: s.onDiscard,
      properties: { import: 'users.csv' },
    },
    async (id) => {
      await env!.sluice.enqueueMany(
        s.row,
        Array.from({ length: 500 }, (_, n) => ({ n, bad: n % 50 === 7 })),
        { batch: id },
      )
    },
  )
  expect(batch).toMatchObject({ total: 500, finished: false })
  await drainAll(connections({ jobs: s.jobs }, 4), { concurrency: 8 })
  expect(s.fired.map((f) => f.callback).sort()).toEqual(['onDiscard', 'onFinish'])
  expect(s.fired[0]!.properties).toEqual({ import: 'users.csv' })
  expect(await env.sluice.getBatch(batch.id)).toMatchObject({ total: 500, completed: 490, discarded: 10 })

  // Replaying the dead letters of a finished batch runs them again, but the batch has fired.
  expect((await env.sluice.deadLetters.retry({ name: 'import-row' })).requeued).toHaveLength(10)
  await drainAll(connections({ jobs: s.jobs }, 2), { concurrency: 8 })
  expect(s.fired.map((f) => f.callback).sort()).toEqual(['onDiscard', 'onFinish'])
})

test('an all-success batch fires onSuccess and onFinish once; an empty one finishes when sealed', async () => {
  const s = setup()
  env = await makeSluice({ jobs: s.jobs })
  const batch = await env.sluice.batch(
    {
      onFinish: s.onFinish,
      onSuccess: s.onSuccess,
      onDiscard: s.onDiscard,
      properties: { import: 'ok.csv' },
    },
    async (id) => {
      await env!.sluice.enqueueMany(
        s.row,
        Array.from({ length: 40 }, (_, n) => ({ n, bad: false })),
        { batch: id },
      )
    },
  )
  await drainAll(connections({ jobs: s.jobs }, 3), { concurrency: 4 })
  expect(s.fired.map((f) => f.callback).sort()).toEqual(['onFinish', 'onSuccess'])
  expect(await env.sluice.getBatch(batch.id)).toMatchObject({ completed: 40, discarded: 0 })

  s.fired.length = 0
  const empty = await env.sluice.batch(
    { onFinish: s.onFinish, properties: { import: 'empty' } },
    async () => {},
  )
  expect(empty).toMatchObject({ total: 0, finished: true })
  await env.sluice.drain()
  expect(s.fired).toEqual([{ callback: 'onFinish', properties: { import: 'empty' } }])
})

test('a batch finished before it is sealed waits for the seal; sealed batches take no more jobs', async () => {
  const s = setup()
  env = await makeSluice({ jobs: s.jobs })
  const { id } = await env.sluice.createBatch({ onFinish: s.onFinish, properties: { import: 'x' } })
  await env.sluice.enqueue(s.row, { n: 1, bad: false }, { batch: id })
  await env.sluice.drain()
  expect(s.fired).toEqual([])
  expect(await env.sluice.sealBatch(id)).toEqual({ total: 1, finished: true })
  await env.sluice.drain()
  expect(s.fired.map((f) => f.callback)).toEqual(['onFinish'])
  await expect(env.sluice.enqueue(s.row, { n: 2, bad: false }, { batch: id })).rejects.toMatchObject({
    code: 'INVALID_INPUT',
  })
  await expect(env.sluice.sealBatch(id)).rejects.toMatchObject({ code: 'INVALID_INPUT' })
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 0 }])
})

test('batch properties are checked against the callbacks before anything is written', async () => {
  const s = setup()
  env = await makeSluice({ jobs: s.jobs })
  await expect(
    env.sluice.createBatch({ onFinish: s.onFinish, properties: { nope: 1 } }),
  ).rejects.toMatchObject({ code: 'INVALID_INPUT' })
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.batches`)).toEqual([{ n: 0 }])
})

test('finished batches are pruned after their retention', async () => {
  const s = setup()
  env = await makeSluice({ jobs: s.jobs, maintenance: { batchRetentionMs: 60_000 } })
  const { id } = await env.sluice.batch(
    { onFinish: s.onFinish, properties: { import: 'old' } },
    async () => {},
  )
  await env.sql(`UPDATE $schema.batches SET finished_at = now() - interval '2 minutes'`)
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'prune-batches')?.rows).toBe(1)
  expect(await env.sluice.getBatch(id)).toBeNull()
})
