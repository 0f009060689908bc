import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineRecurring, defineSubscriber, type EventInfo } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const seen: { who: string; payload: unknown; event: EventInfo }[] = []
const record = (who: string) => (payload: unknown, ctx: { event: EventInfo }) => {
  seen.push({ who, payload, event: ctx.event })
}

test('publish fans out to the matching subscribers, in one statement whatever their number', async () => {
  seen.length = 0
  const subscribers = [
    defineSubscriber({ name: 'all-orders', topic: 'orders.#', queue: 'events', run: record('all-orders') }),
    defineSubscriber({ name: 'created', topic: 'orders.created', queue: 'events', run: record('created') }),
    defineSubscriber({
      name: 'one-level',
      topic: 'orders.*',
      queue: 'other',
      input: z.object({ id: z.string() }),
      run: record('one-level'),
    }),
    defineSubscriber({ name: 'payments', topic: 'payments.*', queue: 'events', run: record('payments') }),
    // Many more subscribers on the topic: the publish stays one statement.
    ...Array.from({ length: 20 }, (_, i) =>
      defineSubscriber({ name: `extra-${i}`, topic: '#.created', queue: 'events', run: () => {} }),
    ),
  ]
  env = await makeSluice({ subscribers })
  const result = await env.sluice.publish(
    'orders.created',
    { id: 'o_1' },
    { eventId: 'evt-1', headers: { source: 'test' } },
  )
  expect(result).toEqual({ eventId: 'evt-1', jobs: 23 })
  expect(env.statements.count).toBe(1)

  env.statements.reset()
  expect(await env.sluice.publish('payments.failed', { id: 'p_1' })).toMatchObject({ jobs: 1 })
  expect(await env.sluice.publish('nobody.listens', null)).toMatchObject({ jobs: 0 })
  expect(env.statements.count).toBe(2)

  const summary = await env.sluice.drain({ queues: ['events', 'other'] })
  expect(summary).toMatchObject({ claimed: 24, completed: 24, failed: 0 })
  const byWho = Object.fromEntries(seen.map((s) => [s.who, s]))
  expect(Object.keys(byWho).sort()).toEqual(['all-orders', 'created', 'one-level', 'payments'])
  expect(byWho.created).toMatchObject({
    payload: { id: 'o_1' },
    event: { topic: 'orders.created', id: 'evt-1', headers: { source: 'test' } },
  })
  expect(byWho.created!.event.publishedAt).toBeInstanceOf(Date)
  const marks = await env.sql<{ n: number }>(`SELECT count(*)::int AS n FROM $schema.processed_events`)
  expect(marks).toEqual([{ n: 24 }])
})

test('an event id published twice writes its jobs once; a later subscriber misses earlier events', async () => {
  seen.length = 0
  const first = defineSubscriber({ name: 'first', topic: 'user.*', run: record('first') })
  env = await makeSluice({ subscribers: [first] })
  expect(await env.sluice.publish('user.joined', { n: 1 }, { eventId: 'dup' })).toEqual({
    eventId: 'dup',
    jobs: 1,
  })
  expect(await env.sluice.publish('user.joined', { n: 2 }, { eventId: 'dup' })).toEqual({
    eventId: 'dup',
    jobs: 0,
  })
  const before = await env.sluice.publish('user.left', { n: 3 })
  expect(before.eventId).toMatch(/^[0-9a-f-]{36}$/)

  // A new deployment adds a subscriber: it receives what is published from now on only.
  const later = defineSubscriber({ name: 'later', topic: 'user.#', run: record('later') })
  const next = createSluice({ database: databaseUrl, schema: env.schema, subscribers: [first, later] })
  await next.migrate()
  expect(await next.publish('user.joined', { n: 4 }, { eventId: 'after' })).toMatchObject({ jobs: 2 })
  await next.drain()
  await next.close()
  expect(seen.map((s) => `${s.who}:${(s.payload as { n: number }).n}`).sort()).toEqual([
    'first:1',
    'first:3',
    'first:4',
    'later:4',
  ])
})

test('bad topics and payloads are refused before anything is written', async () => {
  const typed = defineSubscriber({
    name: 'typed',
    topic: 'orders.created',
    input: z.object({ id: z.string() }),
    run: () => {},
  })
  env = await makeSluice({ subscribers: [typed] })
  for (const topic of [
    '',
    'orders.',
    '.orders',
    'orders..created',
    'orders.*',
    'orders.#',
    'a b',
    'ordérs',
  ]) {
    await expect(env.sluice.publish(topic, {})).rejects.toMatchObject({ code: 'INVALID_NAME' })
  }
  await expect(env.sluice.publish('orders.created', { id: 1 })).rejects.toMatchObject({
    code: 'INVALID_INPUT',
    issues: [{ path: ['payload', 'id'] }],
  })
  await expect(env.sluice.publish('orders.created', {}, { eventId: 'has space' })).rejects.toMatchObject({
    code: 'INVALID_INPUT',
  })
  await expect(
    env.sluice.publish('orders.created', {}, { headers: { x: 1 as unknown as string } }),
  ).rejects.toMatchObject({
    code: 'INVALID_INPUT',
  })
  await expect(env.sluice.enqueue('typed', {})).rejects.toMatchObject({ code: 'INVALID_INPUT' })
  expect(env.statements.count).toBe(0)
  expect(await env.sql(`SELECT 1 FROM $schema.jobs`)).toEqual([])
})

test('subscriber definitions and registration are checked at startup', () => {
  const sub = defineSubscriber({ name: 'sub', topic: 'a.b', run: () => {} })
  const options = { database: databaseUrl, schema: 'unused' }
  expect(() =>
    defineSubscriber({ name: 'x', topic: 'a', concurrency: { limit: 1 }, run: () => {} } as never),
  ).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }))
  expect(() => defineSubscriber({ name: 'bad name', topic: 'a', run: () => {} })).toThrow(
    /Invalid subscriber/,
  )
  expect(() => createSluice({ ...options, jobs: [sub as never] })).toThrow(/pass it in `subscribers`/)
  expect(() => createSluice({ ...options, subscribers: [sub, sub] })).toThrow(/share one namespace/)
  expect(() => createSluice({ ...options, subscribers: [{ name: 'fake' } as never] })).toThrow(
    /defineSubscriber/,
  )
  expect(() =>
    createSluice({
      ...options,
      subscribers: [sub],
      recurring: [
        defineRecurring({
          name: 'r',
          cron: '* * * * *',
          job: sub as never,
          input: {
            topic: 'a.b',
            eventId: 'e',
            payload: null,
            headers: {},
            publishedAt: '2026-01-01T00:00:00Z',
          },
        }),
      ],
    }),
  ).toThrow(/subscribers take events/)
  expect(() => createSluice({ ...options, events: { relayBatchSize: 0 } })).toThrow(/relayBatchSize/)
})
