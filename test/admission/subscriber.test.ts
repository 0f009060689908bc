import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { ConfigError, defineSubscriber } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

test("a subscriber's policy applies to the jobs publish writes, partitioned by a payload path or a header", async () => {
  const ran: string[] = []
  const byAccount = defineSubscriber({
    name: 'bill-account',
    topic: 'orders.*',
    input: z.object({ account: z.object({ id: z.string() }), n: z.number() }),
    admission: { partition: { path: 'account.id' }, throttle: { rate: 2, per: 3_600_000 } },
    run: (payload) => void ran.push(`${payload.account.id}:${payload.n}`),
  })
  const byHeader = defineSubscriber({
    name: 'notify-region',
    topic: 'orders.*',
    admission: { partition: { header: 'region' }, concurrency: { max: 1 } },
    run: () => {},
  })
  env = await makeSluice({ subscribers: [byAccount, byHeader] })
  for (let n = 0; n < 3; n++) {
    for (const id of ['a', 'b']) {
      // One statement per publish, policy or not.
      env.statements.reset()
      await env.sluice.publish('orders.created', { account: { id }, n }, { headers: { region: `r-${id}` } })
      expect(env.statements.count).toBe(1)
    }
  }
  // No region header: the partition is ''.
  await env.sluice.publish('orders.created', { account: { id: 'c' }, n: 9 })
  expect(
    await env.sql(`SELECT name, policy, partition_key, count(*)::int AS n FROM $schema.jobs
                   GROUP BY 1, 2, 3 ORDER BY 1, 3`),
  ).toEqual([
    { name: 'bill-account', policy: 'bill-account', partition_key: 'a', n: 3 },
    { name: 'bill-account', policy: 'bill-account', partition_key: 'b', n: 3 },
    { name: 'bill-account', policy: 'bill-account', partition_key: 'c', n: 1 },
    { name: 'notify-region', policy: 'notify-region', partition_key: '', n: 1 },
    { name: 'notify-region', policy: 'notify-region', partition_key: 'r-a', n: 3 },
    { name: 'notify-region', policy: 'notify-region', partition_key: 'r-b', n: 3 },
  ])
  // bill-account: 2 tokens per partition per hour; notify-region runs one at a time per region.
  await env.sluice.drain({ queues: ['default'] })
  expect(ran.filter((r) => r.startsWith('a:'))).toHaveLength(2)
  expect(ran.filter((r) => r.startsWith('b:'))).toHaveLength(2)
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs WHERE name = 'notify-region'`)).toEqual([
    { n: 0 },
  ])
})

test("a subscriber's policy is validated at definition", () => {
  expect(() =>
    defineSubscriber({
      name: 's',
      topic: 't',
      admission: { partition: { path: '' } },
      run: () => {},
    }),
  ).toThrow(ConfigError)
  expect(() =>
    defineSubscriber({
      name: 's',
      topic: 't',
      // @ts-expect-error a subscriber's limits are constants: publish writes its jobs in SQL
      admission: { concurrency: { max: () => 3 } },
      run: () => {},
    }),
  ).toThrow(ConfigError)
})

test('a replayed dead letter of a subscriber with a policy comes back under its policy, partition and trace', async () => {
  let fail = true
  const ran: string[] = []
  const charge = defineSubscriber({
    name: 'charge-account',
    topic: 'orders.*',
    retry: { maxAttempts: 1 },
    input: z.object({ account: z.string() }),
    admission: { partition: { path: 'account' }, concurrency: { max: 1 } },
    run: (payload) => {
      if (fail) throw new Error('card declined')
      ran.push(payload.account)
    },
  })
  env = await makeSluice({ subscribers: [charge] })
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
  await env.sluice.publish(
    'orders.created',
    { account: 'acme' },
    { eventId: 'e-1', headers: { traceparent } },
  )
  expect(await env.sluice.drain()).toMatchObject({ deadLettered: 1 })
  // Maintenance may have pruned the idle partition meanwhile: replay brings it back too.
  await env.sql(`DELETE FROM $schema.partitions`)
  fail = false
  expect(await env.sluice.replay('e-1')).toHaveLength(1)
  expect(await env.sql('SELECT policy, partition_key, trace_context FROM $schema.jobs')).toEqual([
    { policy: 'charge-account', partition_key: 'acme', trace_context: traceparent },
  ])
  expect(await env.sql('SELECT policy, partition_key, max_in_flight FROM $schema.partitions')).toEqual([
    { policy: 'charge-account', partition_key: 'acme', max_in_flight: 1 },
  ])
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(ran).toEqual(['acme'])
})
