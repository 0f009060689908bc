import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

test('a throttled policy admits its burst, then nothing until tokens refill; plain jobs run beside it', async () => {
  const ran: string[] = []
  const send = defineJob({
    name: 'send',
    input: z.object({ account: z.string(), n: z.number() }),
    admission: { partition: (i) => i.account, throttle: { rate: 2, per: 60_000 }, fair: true },
    run: (i) => {
      ran.push(`${i.account}:${i.n}`)
    },
  })
  const plain = defineJob({ name: 'plain', input: z.object({}), run: () => void ran.push('plain') })
  env = await makeSluice({ jobs: [send, plain] })
  for (let n = 0; n < 5; n++) await env.sluice.enqueue(send, { account: 'a', n })
  for (let n = 0; n < 5; n++) await env.sluice.enqueue(send, { account: 'b', n })
  await env.sluice.enqueue(plain, {})
  const s = await env.sluice.drain()
  expect(s.completed).toBe(5)
  expect(ran.filter((r) => r.startsWith('a:'))).toHaveLength(2)
  expect(ran.filter((r) => r.startsWith('b:'))).toHaveLength(2)
  expect(ran).toContain('plain')
  expect(
    await env.sql(`SELECT partition_key, tokens < 1 AS empty FROM $schema.partitions ORDER BY 1`),
  ).toEqual([
    { partition_key: 'a', empty: true },
    { partition_key: 'b', empty: true },
  ])
  const again = await env.sluice.drain()
  expect(again.claimed).toBe(0)
})

test('concurrency per partition and dedupe', async () => {
  let running = 0
  let peak = 0
  const job = defineJob({
    name: 'capped',
    input: z.object({ k: z.string(), n: z.number() }),
    admission: {
      partition: (i) => i.k,
      concurrency: { max: 2 },
      dedupe: (i) => (i.n === 99 ? 'same' : null),
    },
    run: async () => {
      running++
      peak = Math.max(peak, running)
      await new Promise((r) => setTimeout(r, 5))
      running--
    },
  })
  env = await makeSluice({ jobs: [job] })
  for (let n = 0; n < 6; n++) await env.sluice.enqueue(job, { k: 'x', n })
  expect(await env.sluice.enqueue(job, { k: 'x', n: 99 })).toMatchObject({ status: 'enqueued' })
  expect(await env.sluice.enqueue(job, { k: 'x', n: 99 })).toMatchObject({ status: 'duplicate' })
  const s = await env.sluice.drain({ concurrency: 8 })
  expect(s.completed).toBe(7)
  expect(peak).toBe(2)
  expect(await env.sluice.enqueue(job, { k: 'x', n: 99 })).toMatchObject({ status: 'enqueued' })
})
