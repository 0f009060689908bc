/**
 * The other moves between tables, raced on real connections: cancel, bulk cancel and purge
 * against drains and the promotion of blocked jobs; dead-letter retry, discard and event replay
 * against each other. Every row is counted before and after: each job or dead letter ends in
 * exactly one place, and each operation's answer matches what it did.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, defineSubscriber, type Sluice } from '../../src/index.js'
import { quoteSchema } from '../../src/names.js'
import { makeSluice, perTestConnections, type TestSluice } from '../helpers/db.js'
import { drainAll } from '../helpers/overlap.js'
import { rowFactory } from '../helpers/rows.js'

let env: TestSluice | undefined
const { connections, closeAll } = perTestConnections(() => env!.schema)
afterEach(async () => {
  await closeAll()
  await env?.cleanup()
  env = undefined
})

const count = async (e: TestSluice, table: string): Promise<number> =>
  (await e.sql<{ n: number }>(`SELECT count(*)::int AS n FROM $schema.${table}`))[0]!.n

const ids = async (e: TestSluice, table: string): Promise<string[]> =>
  (await e.sql<{ id: string }>(`SELECT id::text AS id FROM $schema.${table} ORDER BY id`)).map((r) => r.id)

test('cancel, bulk cancel and purge racing drains and blocked promotion: each job ends once, slots add up', async () => {
  const ran = new Map<string, number>()
  const job = defineJob({
    name: 'limited',
    input: z.object({ n: z.number() }),
    concurrency: { limit: 2, key: () => 'k' },
    run: (_input, ctx) => {
      ran.set(ctx.id, (ran.get(ctx.id) ?? 0) + 1)
    },
  })
  env = await makeSluice({ jobs: [job] })
  const enqueued = (
    await env.sluice.enqueueMany(
      job,
      Array.from({ length: 200 }, (_, n) => ({ n })),
    )
  ).map((r) => r.id!)
  expect(await count(env, 'jobs')).toBe(2)
  expect(await count(env, 'blocked')).toBe(198)
  const clients = connections({ jobs: [job] }, 8)

  let deleted = 0
  const cancelled: string[] = []
  const singles = enqueued.filter((_, i) => i % 10 === 5)
  await Promise.all([
    drainAll(clients.slice(0, 4), { budgetMs: 2_000 }, 20),
    (async () => {
      for (let i = 0; i < 5; i++) {
        const got = await clients[4]!.cancelJobs({ name: 'limited', limit: 15 })
        cancelled.push(...got)
      }
    })(),
    (async () => {
      for (let i = 0; i < 3; i++) deleted += await clients[5]!.purgeQueue('default', { limit: 10 })
    })(),
    (async () => {
      for (const id of singles) {
        const ok = await clients[6]!.cancelJob(id).then(
          () => true,
          () => false,
        )
        if (ok) cancelled.push(id)
      }
    })(),
  ])
  deleted += cancelled.length
  // Whatever is left runs.
  await drainAll(clients.slice(0, 4), { budgetMs: 2_000 })

  const archived = await ids(env, 'archive')
  console.log('cancel racing drains', { enqueued: 200, ran: ran.size, deleted, archived: archived.length })
  expect(await count(env, 'jobs')).toBe(0)
  expect(await count(env, 'blocked')).toBe(0)
  expect(archived.length + deleted).toBe(200)
  expect([...ran.values()].every((n) => n === 1)).toBe(true)
  expect([...ran.keys()].sort()).toEqual([...archived].sort())
  expect(new Set(cancelled).size).toBe(cancelled.length)
  for (const id of cancelled) expect(ran.has(id)).toBe(false)
  // Every slot came back: nothing holds the key.
  expect(await env.sql('SELECT value FROM $schema.semaphores')).toEqual([{ value: 0 }])
})

test('dead-letter retry, discard and event replay racing on the same dead letters: each ends in one place', async () => {
  const plain = defineJob({ name: 'plain', input: z.object({ n: z.number() }), run: () => {} })
  const audit = defineSubscriber({ name: 'audit', topic: 'orders.#', queue: 'events', run: () => {} })
  env = await makeSluice({ jobs: [plain], subscribers: [audit] })
  const rows = rowFactory(env.admin, quoteSchema(env.schema))
  for (let n = 0; n < 150; n++) await rows.deadLetter({ name: 'plain', payload: { n } })
  for (let n = 0; n < 50; n++)
    await rows.deadLetter({
      name: 'audit',
      queue: 'events',
      payload: { topic: 'orders.created', eventId: `e${n}`, payload: {}, headers: {}, publishedAt: null },
    })
  const seeded = await ids(env, 'dead_letters')
  expect(seeded).toHaveLength(200)
  const clients = connections({ jobs: [plain], subscribers: [audit] }, 8)

  const requeued: string[] = []
  const kept: string[] = []
  const discarded: string[] = []
  const replayed: string[] = []
  const loop = (times: number, call: () => Promise<void>) => async () => {
    for (let i = 0; i < times; i++) await call()
  }
  const retry = (s: Sluice, query: Parameters<Sluice['deadLetters']['retry']>[0]) => async () => {
    const r = await s.deadLetters.retry(query)
    requeued.push(...r.requeued)
    kept.push(...r.kept.map((k) => k.id))
  }
  const discard = (s: Sluice, query: Parameters<Sluice['deadLetters']['discard']>[0]) => async () => {
    discarded.push(...(await s.deadLetters.discard(query)))
  }
  await Promise.all([
    loop(6, retry(clients[0]!, { name: 'plain', limit: 15 }))(),
    loop(6, retry(clients[1]!, { queue: 'default', limit: 10 }))(),
    loop(4, discard(clients[2]!, { name: 'plain', limit: 10 }))(),
    loop(4, retry(clients[3]!, { name: 'audit', limit: 5 }))(),
    loop(4, async () => {
      replayed.push(...(await clients[4]!.replay({ subscriber: 'audit', limit: 5 })))
    })(),
    loop(2, discard(clients[5]!, { queue: 'events', limit: 5 }))(),
    (async () => {
      for (const id of seeded.filter((_, i) => i % 7 === 0)) await retry(clients[6]!, id)()
    })(),
    (async () => {
      for (const id of seeded.filter((_, i) => i % 11 === 0)) await discard(clients[7]!, id)()
    })(),
  ])

  const jobs = await ids(env, 'jobs')
  const left = await ids(env, 'dead_letters')
  console.log('dead letters racing', {
    seeded: 200,
    requeued: requeued.length,
    replayed: replayed.length,
    discarded: discarded.length,
    jobs: jobs.length,
    deadLetters: left.length,
  })
  expect(kept).toEqual([])
  // Each dead letter went one way at most, and the answers say which.
  const moved = [...requeued, ...replayed, ...discarded]
  expect(new Set(moved).size).toBe(moved.length)
  expect(jobs.length + left.length + discarded.length).toBe(200)
  expect(jobs.sort()).toEqual([...requeued, ...replayed].sort())
  expect([...jobs, ...left, ...discarded].sort()).toEqual([...seeded].sort())
})
