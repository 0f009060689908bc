import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import type { Statement } from '../../src/db/types.js'
import { defineJob } from '../../src/index.js'
import { type ClaimParams, type ClaimRow, claim } from '../../src/sql/index.js'
import { makeSluice, pgPool, type TestSluice } from '../helpers/db.js'

// A claim may drop candidates after picking them (here: several share a while-executing key and
// only the first takes it). Fewer rows than asked for must not read as "the queues are empty".

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const keyed = defineJob({
  name: 'keyed',
  input: z.object({ n: z.number() }),
  unique: { key: () => 'same', strategy: 'while-executing' },
  run: () => {},
})
const plain = defineJob({ name: 'plain', input: z.object({ n: z.number() }), run: () => {} })

async function seed(sluice: TestSluice['sluice']): Promise<void> {
  await sluice.enqueueMany(keyed, [{ n: 1 }, { n: 2 }, { n: 3 }], { priority: 0 })
  await sluice.enqueueMany(
    plain,
    Array.from({ length: 10 }, (_, n) => ({ n })),
  )
}

test.each([
  { name: 'default options', options: {} },
  { name: 'batchSize 3', options: { batchSize: 3 } },
  { name: 'batchSize 1', options: { batchSize: 1 } },
])('a drain runs every job when the claim drops same-key candidates ($name)', async ({ options }) => {
  env = await makeSluice({ jobs: [keyed, plain] })
  await seed(env.sluice)
  const summary = await env.sluice.drain(options)
  expect({
    claimed: summary.claimed,
    completed: summary.completed,
    stoppedBy: summary.stoppedBy,
    remainingReady: summary.remainingReady,
  }).toEqual({ claimed: 13, completed: 13, stoppedBy: 'empty', remainingReady: 0 })
})

const q = (s: Statement) => ({ text: s.text, values: [...s.values] })

const params = (invocationId: string, limit: number): ClaimParams => ({
  queues: ['default'],
  limit,
  leaseMs: 60_000,
  invocationId,
  invocationPriority: 0,
  jobsDone: 0,
})

test('the claim says whether more may remain: rows it dropped after picking, or a full pick', async () => {
  env = await makeSluice({ jobs: [keyed, plain] })
  await seed(env.sluice)
  const t = `"${env.schema}"`
  const claimOf = async (id: string, limit: number) =>
    (await env!.admin.query<ClaimRow>(q(claim(t, params(id, limit))))).rows
  // Picks the 3 keyed jobs, takes the key for the first, drops the other two.
  const first = await claimOf('a', 3)
  expect(first.map((r) => [r.name, r.more])).toEqual([['keyed', true]])
  // The 10 plain jobs, fewer than asked for, nothing dropped: the queue has no more for now.
  const second = await claimOf('b', 20)
  expect(second.map((r) => r.name)).toEqual(Array(10).fill('plain'))
  expect(second.every((r) => r.more === false)).toBe(true)
})

test('a claim whose every pick went to another claim still says more: one row with only the flag', async () => {
  env = await makeSluice({ jobs: [keyed] })
  await env.sluice.enqueueMany(keyed, [{ n: 1 }, { n: 2 }])
  const t = `"${env.schema}"`
  const pool = pgPool(3)
  const a = await pool.connect()
  try {
    // A claims job 1 and takes the key, and holds its transaction open.
    await a.query('BEGIN')
    const taken = await a.query<ClaimRow>(q(claim(t, params('a', 1))))
    expect(taken.rows.map((r) => r.name)).toEqual(['keyed'])
    // B cannot see A's key yet: it picks job 2 and waits on the key's row for A to commit.
    const b = pool.query<ClaimRow>(q(claim(t, params('b', 1))))
    for (;;) {
      const { rows } = await env.admin.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
        [`%${t}.claim(%`],
      )
      if (rows.length > 0) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    await a.query('COMMIT')
    // The key is A's: B claims nothing, and says a claim once A's job settles may find more.
    expect((await b).rows).toEqual([
      expect.objectContaining({ id: null, queue: null, name: null, more: true }),
    ])
  } finally {
    a.release()
    await pool.end()
  }
})
