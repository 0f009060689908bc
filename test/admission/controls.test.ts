/**
 * The operator's controls over admission partitions: a pause the claim honours, a cap override
 * that wins over concurrency (0 admits nothing), and the errors for bad or unknown arguments.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, NotFoundError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

function sendJob(ran: string[]) {
  return defineJob({
    name: 'send',
    input: z.object({ account: z.string(), n: z.number() }),
    admission: { partition: (i) => i.account, concurrency: { max: 4 } },
    run: (i) => {
      ran.push(`${i.account}:${i.n}`)
    },
  })
}

const ofAccount = (ran: string[], account: string) => ran.filter((r) => r.startsWith(`${account}:`))

test('a paused partition is skipped by the claim until it is resumed; the others run', async () => {
  const ran: string[] = []
  const send = sendJob(ran)
  env = await makeSluice({ jobs: [send] })
  for (let n = 0; n < 3; n++) await env.sluice.enqueue(send, { account: 'a', n })
  for (let n = 0; n < 3; n++) await env.sluice.enqueue(send, { account: 'b', n })

  await env.sluice.pausePartition('send', 'a')
  const [a] = await env.sluice.inspect.partitions('send', { limit: 1 })
  expect(a).toMatchObject({ partition: 'a', paused: true, pending: 3, reason: 'partition paused' })
  expect((await env.sluice.inspect.policies())[0]).toMatchObject({ name: 'send', pausedPartitions: 1 })

  const first = await env.sluice.drain()
  expect(first.completed).toBe(3)
  expect(ofAccount(ran, 'a')).toEqual([])
  expect(ofAccount(ran, 'b')).toHaveLength(3)
  // A later enqueue into the partition leaves the pause alone.
  await env.sluice.enqueue(send, { account: 'a', n: 3 })
  expect((await env.sluice.drain()).claimed).toBe(0)

  await env.sluice.resumePartition('send', 'a')
  const second = await env.sluice.drain()
  expect(second.completed).toBe(4)
  expect(ofAccount(ran, 'a')).toHaveLength(4)
})

test('a cap override of 0 admits nothing; a cap of 1 admits one at a time; null restores the concurrency', async () => {
  const ran: string[] = []
  let running = 0
  let peak = 0
  // While set, each run waits (5 s at most) until this many run at once.
  let together = 0
  const send = defineJob({
    name: 'send',
    input: z.object({ account: z.string(), n: z.number() }),
    admission: { partition: (i) => i.account, concurrency: { max: 4 } },
    run: async (i) => {
      running++
      peak = Math.max(peak, running)
      for (let waited = 0; running < together && waited < 5_000; waited += 10)
        await new Promise((r) => setTimeout(r, 10))
      running--
      ran.push(`${i.account}:${i.n}`)
    },
  })
  env = await makeSluice({ jobs: [send] })
  for (let n = 0; n < 6; n++) await env.sluice.enqueue(send, { account: 'a', n })

  await env.sluice.setPartitionCap('send', 'a', 0)
  const [a] = await env.sluice.inspect.partitions('send')
  expect(a).toMatchObject({ cap: 0, capOverride: 0, reason: 'partition at its cap 0/0' })
  expect((await env.sluice.drain({ concurrency: 4 })).claimed).toBe(0)

  await env.sluice.setPartitionCap('send', 'a', 1)
  const one = await env.sluice.drain({ concurrency: 4, maxJobs: 3 })
  expect(one.completed).toBe(3)
  expect(peak).toBe(1)

  await env.sluice.setPartitionCap('send', 'a', null)
  expect((await env.sluice.inspect.partitions('send'))[0]).toMatchObject({ cap: 4, capOverride: null })
  peak = 0
  together = 3
  const rest = await env.sluice.drain({ concurrency: 4 })
  expect(rest.completed).toBe(3)
  expect(peak).toBe(3)
})

test('unknown partitions are NOT_FOUND; bad names and caps are INVALID_INPUT; nothing is written', async () => {
  const ran: string[] = []
  const send = sendJob(ran)
  env = await makeSluice({ jobs: [send] })
  await env.sluice.enqueue(send, { account: 'a', n: 0 })

  const missing = env.sluice.pausePartition('send', 'zz')
  await expect(missing).rejects.toBeInstanceOf(NotFoundError)
  await expect(env.sluice.resumePartition('nobody', 'a')).rejects.toMatchObject({ code: 'NOT_FOUND' })
  await expect(env.sluice.setPartitionCap('send', 'zz', 1)).rejects.toMatchObject({
    code: 'NOT_FOUND',
    message: 'No partition "zz" of admission policy "send".',
  })

  const invalid = [
    () => env!.sluice.pausePartition('', 'a'),
    () => env!.sluice.pausePartition('send', 'x'.repeat(513)),
    () => env!.sluice.pausePartition('send', 'a\u0000b'),
    () => env!.sluice.pausePartition('p'.repeat(513), 'a'),
    () => env!.sluice.resumePartition(7 as unknown as string, 'a'),
    () => env!.sluice.setPartitionCap('send', 'a', -1),
    () => env!.sluice.setPartitionCap('send', 'a', 1.5),
    () => env!.sluice.setPartitionCap('send', 'a', 1_000_001),
    () => env!.sluice.setPartitionCap('send', 'a', undefined as unknown as null),
  ]
  env.statements.reset()
  for (const call of invalid) await expect(call()).rejects.toMatchObject({ code: 'INVALID_INPUT' })
  expect(env.statements.count).toBe(0)
  expect(await env.sql('SELECT paused, cap_override FROM $schema.partitions')).toEqual([
    { paused: false, cap_override: null },
  ])

  // A policy without a partition function has one partition, ''.
  const single = defineJob({
    name: 'single',
    input: z.object({}),
    admission: { concurrency: { max: 1 } },
    run: () => {},
  })
  const other = await makeSluice({ jobs: [single] })
  try {
    await other.sluice.enqueue(single, {})
    await other.sluice.pausePartition('single', '')
    expect((await other.sluice.inspect.partitions('single'))[0]).toMatchObject({
      partition: '',
      paused: true,
    })
    expect((await other.sluice.drain()).claimed).toBe(0)
  } finally {
    await other.cleanup()
  }
})
