/**
 * inspect.locks() and inspect.events(): what each lock row and each subscriber shows, each in one
 * statement, on state made through the API (enqueue, publish, a drain) where it can be.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import * as z from 'zod'
import { defineJob, defineSubscriber } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { type RowFactory, rowFactory } from '../helpers/rows.js'

const input = z.object({}).default({})
const unique = defineJob({
  name: 'unique',
  queue: 'u',
  input,
  unique: { key: () => 'report:1' },
  run: () => {},
})
const limited = defineJob({
  name: 'limited',
  queue: 'l',
  input,
  concurrency: { limit: 1, key: () => 'acct' },
  run: () => {},
})
const seen = defineSubscriber({ name: 'seen', topic: 'orders.#', queue: 'events', run: () => {} })
const other = defineSubscriber({ name: 'other', topic: 'users.created', queue: 'events', run: () => {} })

let t: TestSluice
let rows: RowFactory
beforeAll(async () => {
  t = await makeSluice({ jobs: [unique, limited], subscribers: [seen, other] })
  rows = rowFactory(t.admin, `"${t.schema}"`)
})
afterAll(() => t.cleanup())

test('locks: uniqueness locks, semaphores with holders and blocked jobs, queue leases', async () => {
  const u = await t.sluice.enqueue(unique, {})
  const holder = await t.sluice.enqueue(limited, {})
  await t.sluice.enqueue(limited, {})
  await t.sluice.enqueue(limited, {})
  await rows.inHeldSingleConsumer('single', 'inv-7')

  t.statements.reset()
  const l = await t.sluice.inspect.locks()
  expect(t.statements.count).toBe(1)
  expect(l.uniqueLocks).toEqual([
    expect.objectContaining({
      key: 'report:1',
      strategy: 'until-executed',
      state: 'queued',
      jobId: u.id,
      owner: null,
    }),
  ])
  expect(l.semaphores).toEqual([
    expect.objectContaining({ key: 'acct', limit: 1, taken: 1, holders: [holder.id], blocked: 2 }),
  ])
  expect(l.queueLeases).toEqual([expect.objectContaining({ queue: 'single', owner: 'inv-7', live: true })])
  expect(l.queueLeases[0]!.ageSeconds).toBeGreaterThanOrEqual(0)
})

test('events: deliveries per subscriber over the hour, processed marks, the outbox backlog', async () => {
  await t.sluice.publish('orders.created', { id: 1 })
  await t.sluice.publish('orders.paid', { id: 1 })
  await t.sluice.drain({ queues: ['events'] })
  await t.sql(`SELECT $schema.outbox_publish('orders.created', '{"id": 2}')`)
  await t.sql(`SELECT $schema.outbox_publish('users.created', '{"id": 3}')`)

  t.statements.reset()
  const e = await t.sluice.inspect.events()
  expect(t.statements.count).toBe(1)
  const byName = Object.fromEntries(e.subscribers.map((s) => [s.name, s]))
  expect(byName.seen).toMatchObject({
    pattern: 'orders.#',
    queue: 'events',
    deliveriesLastHour: 2,
    processed: 2,
  })
  expect(byName.seen!.lastDeliveryAt).not.toBeNull()
  expect(byName.other).toMatchObject({ deliveriesLastHour: 0, processed: 0, lastDeliveryAt: null })
  expect(e.outbox).toMatchObject({ pending: 2, publishedLastHour: 0 })
  expect(e.outbox.oldestPendingAgeSeconds).toBeGreaterThanOrEqual(0)

  // Relayed by maintenance: nothing pending, two published.
  await t.sluice.maintain()
  const after = await t.sluice.inspect.events()
  expect(after.outbox).toMatchObject({ pending: 0, oldestPendingAgeSeconds: 0, publishedLastHour: 2 })
  expect(after.subscribers.find((s) => s.name === 'other')!.deliveriesLastHour).toBe(1)
})
