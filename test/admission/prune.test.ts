import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

test('maintenance deletes partitions idle for an hour, and only those; a later enqueue writes the row again', async () => {
  const job = defineJob({
    name: 'per-tenant',
    input: z.object({ tenant: z.string() }),
    admission: { partition: (i) => i.tenant, throttle: { rate: 100, per: 1_000 } },
    run: () => {},
  })
  env = await makeSluice({ jobs: [job] })
  for (const tenant of ['idle', 'fresh', 'paused', 'waiting', 'spent'])
    await env.sluice.enqueue(job, { tenant })
  expect(await env.sluice.drain()).toMatchObject({ completed: 5 })
  await env.sluice.enqueue(job, { tenant: 'waiting' })
  await env.sql(`UPDATE $schema.partitions SET last_enqueued_at = now() - interval '2 hours',
                 last_admitted_at = now() - interval '2 hours', refilled_at = now() - interval '2 hours'
                 WHERE partition_key <> 'fresh'`)
  await env.sql(`UPDATE $schema.partitions SET paused = true WHERE partition_key = 'paused'`)
  // A bucket not yet refilled: deleting it would give its tokens back.
  await env.sql(`UPDATE $schema.partitions SET tokens = 0, refilled_at = now() WHERE partition_key = 'spent'`)
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'prune-partitions')).toMatchObject({ ran: true, rows: 1 })
  expect(await env.sql(`SELECT partition_key FROM $schema.partitions ORDER BY 1`)).toEqual([
    { partition_key: 'fresh' },
    { partition_key: 'paused' },
    { partition_key: 'spent' },
    { partition_key: 'waiting' },
  ])
  await env.sluice.enqueue(job, { tenant: 'idle' })
  expect(await env.sluice.drain()).toMatchObject({ completed: 2 })
})

test("a queue's place on the ring goes with its last partition, and only then", async () => {
  const job = (queue: string) =>
    defineJob({
      name: `fair-${queue}`,
      queue,
      input: z.object({ tenant: z.string() }),
      admission: { partition: (i) => i.tenant, concurrency: { max: 1 } },
      run: () => {},
    })
  const [gone, stays] = [job('gone'), job('stays')]
  env = await makeSluice({ jobs: [gone, stays] })
  for (const tenant of ['a', 'b']) {
    await env.sluice.enqueue(gone, { tenant })
    await env.sluice.enqueue(stays, { tenant })
  }
  expect(await env.sluice.drain()).toMatchObject({ completed: 4 })
  const places = () => env!.sql(`SELECT queue FROM $schema.partition_turns ORDER BY queue`)
  expect(await places()).toEqual([{ queue: 'gone' }, { queue: 'stays' }])
  // Every partition of 'gone' is idle; one of 'stays' is not.
  await env.sql(`UPDATE $schema.partitions SET last_enqueued_at = now() - interval '2 hours',
                 last_admitted_at = now() - interval '2 hours'
                 WHERE queue = 'gone' OR partition_key = 'a'`)
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'prune-partitions')).toMatchObject({ ran: true, rows: 3 })
  expect(await env.sql(`SELECT queue, partition_key FROM $schema.partitions`)).toEqual([
    { queue: 'stays', partition_key: 'b' },
  ])
  expect(await places()).toEqual([{ queue: 'stays' }])
  // The queue claims again from the beginning of its ring.
  await env.sluice.enqueue(gone, { tenant: 'c' })
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await places()).toEqual([{ queue: 'gone' }, { queue: 'stays' }])
})
