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
