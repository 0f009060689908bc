/**
 * Admitted jobs whose drain died are taken again at their places on the admit index, which holds
 * leased jobs too (the walk takes one whose lease has ended). Six claimers on six connections race
 * for them: each job is leased again exactly once, to the claimer whose claim returned it.
 */
import type pg from 'pg'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { claim } from '../../src/sql/claim.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

test('six claimers at once take each ended lease once', async () => {
  const PARTITIONS = 4
  const JOBS = 1_200
  for (let p = 0; p < PARTITIONS; p++)
    await s.rows.partition({ policy: 'send', partitionKey: `k${p}`, queue: 'mail', rate: null })
  // The window a double claim needs is short (a claim that read the jobs before another's commit,
  // locking their partition after it): the race is run several times.
  for (let round = 0; round < 4; round++) {
    // Leased by a drain that died a minute ago, each with attempts left.
    await s.sql('DELETE FROM $t.jobs')
    await s.sql(
      `INSERT INTO $t.jobs (queue, name, payload, policy, partition_key, lease_token, leased_by, attempts, run_at,
                            lease_until)
       SELECT 'mail', 'send', '{}', 'send', 'k' || (i % $1::int), gen_random_uuid(), 'inv-dead', 1,
              now() - interval '2 minutes' - i * interval '1 millisecond',
              now() - interval '1 minute' - i * interval '1 millisecond'
       FROM generate_series(1, $2::int) i`,
      [PARTITIONS, JOBS],
    )

    const clients: pg.PoolClient[] = await Promise.all(Array.from({ length: 6 }, () => s.pool.connect()))
    const taken = new Map<string, string[]>()
    try {
      await Promise.all(
        clients.map(async (client, c) => {
          const invocation = `inv-${round}-${c}`
          for (;;) {
            const statement = claim(s.t, {
              queues: ['mail'],
              limit: 8,
              leaseMs: 60_000,
              invocationId: invocation,
              invocationPriority: 0,
              jobsDone: 0,
            })
            const rows = (
              await client.query<{ id: string | null; more: boolean }>(statement.text, [...statement.values])
            ).rows
            const ids = rows.flatMap((r) => (r.id === null ? [] : [r.id]))
            for (const id of ids) taken.set(id, [...(taken.get(id) ?? []), invocation])
            if (ids.length === 0 && !rows.some((r) => r.more)) return
          }
        }),
      )
    } finally {
      for (const client of clients) client.release()
    }

    const twice = [...taken].filter(([, by]) => by.length > 1)
    expect(twice).toEqual([])
    expect(taken.size).toBe(JOBS)
    // Each is leased to the claimer that got it, its attempt counted once more.
    const rows = await s.sql<{ id: string; leased_by: string; attempts: number }>(
      'SELECT id::text, leased_by, attempts FROM $t.jobs',
    )
    expect(rows.filter((r) => r.leased_by !== taken.get(r.id)?.[0] || r.attempts !== 2)).toEqual([])
  }
})
