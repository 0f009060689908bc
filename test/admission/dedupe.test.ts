/**
 * Dedupe: a second enqueue with the same key is dropped while the first is queued or running,
 * even when they race on separate connections; once it has run the key is free again; a null
 * key dedupes nothing.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, type EnqueueResult } from '../../src/index.js'
import { makeSluice, perTestConnections, type TestSluice } from '../helpers/db.js'
import { sleep } from '../helpers/overlap.js'

let env: TestSluice | undefined
const { connections, closeAll } = perTestConnections(() => env!.schema)
afterEach(async () => {
  await closeAll()
  await env?.cleanup()
  env = undefined
})

/** Released by the test: lets a handler hold its job running. */
function gate(): { wait: Promise<void>; open(): void } {
  let open = (): void => {}
  const wait = new Promise<void>((resolve) => {
    open = resolve
  })
  return { wait, open }
}

// 100 enqueues over 50 connections (two in flight on each, the server allows 100 connections in
// all, shared with the other test files): 50 race at once on the key.
const CONNECTIONS = 50
const ENQUEUES = 100

test('100 concurrent enqueues of one key on separate connections write one job; once it has run the key is accepted again', async () => {
  const release = gate()
  let started = false
  const job = defineJob({
    name: 'deduped',
    input: z.object({ key: z.string().nullable(), n: z.number() }),
    admission: { dedupe: (i) => i.key },
    run: async () => {
      started = true
      await release.wait
    },
  })
  env = await makeSluice({ jobs: [job] })
  const senders = connections({ jobs: [job] }, CONNECTIONS)
  const results: EnqueueResult[] = await Promise.all(
    Array.from({ length: ENQUEUES }, (_, n) => senders[n % CONNECTIONS]!.enqueue(job, { key: 'k', n })),
  )
  const enqueued = results.filter((r) => r.status === 'enqueued')
  expect(enqueued).toHaveLength(1)
  const id = enqueued[0]!.id
  expect(results.filter((r) => r.status === 'duplicate')).toEqual(
    Array.from({ length: ENQUEUES - 1 }, () => ({ id: null, status: 'duplicate', existingId: id })),
  )
  expect(await env.sql(`SELECT id::text FROM $schema.jobs`)).toEqual([{ id }])

  // While it runs the key is still taken.
  const draining = env.sluice.drain()
  for (let i = 0; i < 400 && !started; i++) await sleep(10)
  expect(started).toBe(true)
  expect(await senders[0]!.enqueue(job, { key: 'k', n: 100 })).toMatchObject({ status: 'duplicate' })
  release.open()
  expect(await draining).toMatchObject({ completed: 1 })

  // Once it has run, the key is accepted again, once.
  const again = await Promise.all(senders.slice(0, 10).map((s, n) => s.enqueue(job, { key: 'k', n })))
  expect(again.filter((r) => r.status === 'enqueued')).toHaveLength(1)
  expect(again.filter((r) => r.status === 'duplicate')).toHaveLength(9)
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 1 }])
}, 60_000)

test('a null dedupe key dedupes nothing: 100 concurrent enqueues write 100 jobs', async () => {
  const job = defineJob({
    name: 'deduped-null',
    input: z.object({ key: z.string().nullable(), n: z.number() }),
    admission: { dedupe: (i) => i.key },
    run: () => {},
  })
  env = await makeSluice({ jobs: [job] })
  const senders = connections({ jobs: [job] }, CONNECTIONS)
  const results = await Promise.all(
    Array.from({ length: ENQUEUES }, (_, n) => senders[n % CONNECTIONS]!.enqueue(job, { key: null, n })),
  )
  expect(results.filter((r) => r.status === 'enqueued')).toHaveLength(ENQUEUES)
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: ENQUEUES }])
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.unique_locks`)).toEqual([{ n: 0 }])
  // Distinct keys do not collide either.
  const keyed = await Promise.all(
    Array.from({ length: 20 }, (_, n) => senders[n]!.enqueue(job, { key: `k${n}`, n })),
  )
  expect(keyed.every((r) => r.status === 'enqueued')).toBe(true)
}, 60_000)
