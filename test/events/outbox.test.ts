import pg from 'pg'
import { afterEach, expect, test } from 'vitest'
import { createSluice, defineSubscriber } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const audit = defineSubscriber({ name: 'audit', topic: 'orders.#', queue: 'events', run: () => {} })
const mailer = defineSubscriber({ name: 'mailer', topic: '*.created', queue: 'events', run: () => {} })

const due = async (e: TestSluice): Promise<void> => {
  await e.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
}

test('outbox_publish from raw SQL inside a pg transaction: a rollback leaves nothing, a commit is relayed once', async () => {
  env = await makeSluice({ subscribers: [audit, mailer] })
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query('BEGIN')
    await client.query(`SELECT "${env.schema}".outbox_publish('orders.created', '{"id": "o1"}')`)
    await client.query('ROLLBACK')
    expect(await env.sql(`SELECT 1 FROM $schema.outbox`)).toEqual([])

    await client.query('BEGIN')
    const { rows } = await client.query(
      `SELECT "${env.schema}".outbox_publish($1, $2::jsonb, $3, $4::jsonb) AS id`,
      ['orders.created', JSON.stringify({ id: 'o2' }), 'o2-created', JSON.stringify({ source: 'checkout' })],
    )
    expect(rows[0].id).toMatch(/^\d+$/)
    // Nothing is visible, to the relay or anyone else, before the commit.
    expect(await env.sql(`SELECT 1 FROM $schema.outbox`)).toEqual([])
    await client.query('COMMIT')
  } finally {
    await client.end()
  }

  await due(env)
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'relay-outbox')).toMatchObject({ ran: true, rows: 1 })
  const jobs = await env.sql<{ name: string; payload: Record<string, unknown> }>(
    `SELECT name, payload FROM $schema.jobs ORDER BY name`,
  )
  expect(jobs.map((j) => j.name)).toEqual(['audit', 'mailer'])
  expect(jobs[0]!.payload).toMatchObject({
    topic: 'orders.created',
    eventId: 'o2-created',
    payload: { id: 'o2' },
    headers: { source: 'checkout' },
  })
  expect(await env.sql(`SELECT published_at IS NOT NULL AS published FROM $schema.outbox`)).toEqual([
    { published: true },
  ])
  // A second relay finds nothing pending.
  await due(env)
  const again = await env.sluice.maintain()
  expect(again.tasks.find((t) => t.task === 'relay-outbox')).toMatchObject({ ran: true, rows: 0 })
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 2 }])

  // Published entries go after the retention.
  await env.sql(`UPDATE $schema.outbox SET published_at = now() - interval '8 days'`)
  await due(env)
  const pruned = await env.sluice.maintain()
  expect(pruned.tasks.find((t) => t.task === 'prune-outbox')).toMatchObject({ ran: true, rows: 1 })
  expect(await env.sql(`SELECT 1 FROM $schema.outbox`)).toEqual([])
})

test('four concurrent relays over 5,000 outbox entries publish each entry exactly once', async () => {
  env = await makeSluice({ subscribers: [audit, mailer] })
  await env.sql(
    `SELECT $schema.outbox_publish('orders.created', jsonb_build_object('n', g)) FROM generate_series(1, 5000) g`,
  )
  const relay = async (): Promise<number[]> => {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    const batches: number[] = []
    try {
      for (;;) {
        const { rows } = await client.query(`SELECT entries FROM "${env!.schema}".relay_outbox(50)`)
        if (rows[0].entries === 0) return batches
        batches.push(rows[0].entries)
      }
    } finally {
      await client.end()
    }
  }
  const results = await Promise.all([relay(), relay(), relay(), relay()])
  const perRelay = results.map((batches) => batches.reduce((a, b) => a + b, 0))
  // Every entry counted once across the relays (a double relay would count it twice) ...
  expect(perRelay.reduce((a, b) => a + b, 0)).toBe(5000)
  // ... and the relays really ran side by side.
  expect(perRelay.every((n) => n > 0)).toBe(true)
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.outbox WHERE published_at IS NULL`)).toEqual([
    { n: 0 },
  ])
  const [counts] = await env.sql<{ jobs: number; events: number; dupes: number }>(
    `SELECT count(*)::int AS jobs, count(DISTINCT payload->>'eventId')::int AS events,
            (SELECT count(*)::int FROM (SELECT 1 FROM $schema.jobs GROUP BY payload->>'eventId', name HAVING count(*) > 1) d) AS dupes
     FROM $schema.jobs`,
  )
  expect(counts).toEqual({ jobs: 10_000, events: 5000, dupes: 0 })
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.event_deliveries`)).toEqual([{ n: 10_000 }])
})

test('drains relay pending entries with their first claim, at no extra statement', async () => {
  let handled = 0
  const counter = defineSubscriber({
    name: 'counter',
    topic: 'ticks.#',
    run: () => {
      handled++
    },
  })
  env = await makeSluice({ subscribers: [counter] })
  await env.sql(
    `SELECT $schema.outbox_publish('ticks.one', 'null'), $schema.outbox_publish('ticks.two', '1', 'tick-2')`,
  )
  env.statements.reset()
  expect(await env.sluice.drain()).toMatchObject({ claimed: 2, completed: 2 })
  expect(env.statements.count).toBe(2)
  expect(handled).toBe(2)

  // Turned off, a drain leaves the outbox to maintenance.
  const off = createSluice({
    database: databaseUrl,
    schema: env.schema,
    subscribers: [counter],
    events: { drainRelayLimit: 0 },
  })
  await env.sql(`SELECT $schema.outbox_publish('ticks.three', 'null')`)
  expect(await off.drain()).toMatchObject({ claimed: 0 })
  await off.close()
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.outbox WHERE published_at IS NULL`)).toEqual([
    { n: 1 },
  ])
})

test('an outbox entry reaches the subscribers that existed when it was written, and is validated', async () => {
  env = await makeSluice({ subscribers: [audit] })
  await env.sql(`SELECT $schema.outbox_publish('orders.created', '{}', 'early')`)
  // Deployed later: a new subscriber; the entry written before it is relayed after it.
  const next = createSluice({ database: databaseUrl, schema: env.schema, subscribers: [audit, mailer] })
  await next.migrate()
  await env.sql(`SELECT $schema.outbox_publish('orders.created', '{}', 'late')`)
  await env.sql(`SELECT $schema.relay_outbox(100)`)
  await next.close()
  expect(await env.sql(`SELECT payload->>'eventId' AS event, name FROM $schema.jobs ORDER BY 1, 2`)).toEqual([
    { event: 'early', name: 'audit' },
    { event: 'late', name: 'audit' },
    { event: 'late', name: 'mailer' },
  ])

  for (const args of [
    `'orders..created', '{}'`,
    `'orders.#', '{}'`,
    `'orders.created', '{}', 'has space'`,
    `'orders.created', '{}', NULL, '[]'`,
    `'orders.created', '{}', NULL, '{"n": 1}'`,
    `'orders.created', '{}', NULL, NULL, -1`,
  ]) {
    const outcome = await env.sql(`SELECT $schema.outbox_publish(${args})`).then(
      () => 'ok',
      (error: { code?: string }) => error.code,
    )
    expect([args, outcome]).toEqual([args, '22023'])
  }
})
