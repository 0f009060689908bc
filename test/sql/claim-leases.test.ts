/**
 * The lease rows (claim_leases, migration 0027): what counts the jobs in flight now that a claim
 * writes nothing indexed. A count is the jobs of the rows whose lease is still theirs (the view
 * leased_jobs), so it stays exact whichever statement ended a lease and whether or not a row is
 * gone yet; the settle deletes the rows of the leases it ended, maintenance what is left.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ClaimedRow, type SettleRow, settle } from '../../src/sql/index.js'
import { endLeasesSql } from '../helpers/db.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

const complete = (rows: readonly ClaimedRow[]) =>
  settle(s.t, {
    completions: rows.map((r) => ({
      id: r.id,
      token: r.token,
      status: 'completed',
      durationMs: 1,
      waitMs: 1,
    })),
    failures: [],
    handBacks: [],
  })

const inFlight = async (): Promise<number> =>
  (await s.sql<{ n: number }>(`SELECT count(*)::int AS n FROM $t.leased_jobs WHERE lease_until > now()`))[0]!
    .n
const leaseRows = async (): Promise<number> =>
  (await s.sql<{ n: number }>(`SELECT count(*)::int AS n FROM $t.claim_leases`))[0]!.n

describe('lease rows', () => {
  it('a claim writes one row per queue and partition; a settle of all its jobs deletes them', async () => {
    await s.rows.partition({ policy: 'send', partitionKey: 'acme', queue: 'default', rate: null })
    await s.rows.ready()
    await s.rows.ready()
    await s.rows.ready({ queue: 'other' })
    await s.rows.ready({ name: 'send', policy: 'send', partitionKey: 'acme' })
    const rows = await s.claimed({ queues: ['default', 'other'] })
    expect(rows).toHaveLength(4)
    expect(
      await s.sql(
        `SELECT queue, policy, partition_key, cardinality(ids) AS jobs FROM $t.claim_leases ORDER BY queue, policy`,
      ),
    ).toEqual([
      { queue: 'default', policy: 'send', partition_key: 'acme', jobs: 1 },
      { queue: 'default', policy: null, partition_key: null, jobs: 2 },
      { queue: 'other', policy: null, partition_key: null, jobs: 1 },
    ])
    expect(await inFlight()).toBe(4)
    await s.run<SettleRow>(complete(rows))
    expect(await leaseRows()).toBe(0)
    expect(await inFlight()).toBe(0)
  })

  it('a settle of part of a claim keeps its row, which counts only the jobs still leased', async () => {
    for (let i = 0; i < 3; i++) await s.rows.ready()
    const rows = await s.claimed()
    await s.run<SettleRow>(complete(rows.slice(0, 1)))
    expect(await leaseRows()).toBe(1)
    expect(await inFlight()).toBe(2)
    await s.run<SettleRow>(complete(rows.slice(1)))
    expect(await leaseRows()).toBe(0)
  })

  it('two settles of one claim at once: the row may stay behind, the count is exact, maintenance deletes it', async () => {
    await s.rows.queue({ name: 'default', globalCap: 2 })
    await s.rows.ready()
    await s.rows.ready()
    const rows = await s.claimed()
    expect(rows).toHaveLength(2)
    // Each settle runs while the other's transaction is open: neither sees the other's job end.
    const a = await s.pool.connect()
    const b = await s.pool.connect()
    try {
      await a.query('BEGIN')
      await b.query('BEGIN')
      await s.run<SettleRow>(complete(rows.slice(0, 1)), a)
      await s.run<SettleRow>(complete(rows.slice(1)), b)
      await a.query('COMMIT')
      await b.query('COMMIT')
    } finally {
      a.release()
      b.release()
    }
    expect(await leaseRows()).toBe(1)
    expect(await inFlight()).toBe(0)
    // The cap sees no job in flight: a claim takes two again.
    await s.rows.ready()
    await s.rows.ready()
    await s.rows.ready()
    const next = await s.claimed({ invocationId: 'inv-b' })
    expect(next).toHaveLength(2)
    // Once its lease's end has passed, maintenance deletes the empty row, not the live one.
    await s.sql(`UPDATE $t.claim_leases SET lease_until = now() - interval '1 ms' WHERE cardinality(ids) = 2
                 AND NOT EXISTS (SELECT 1 FROM $t.jobs j WHERE j.lease_token = token)`)
    expect(await s.sql(`SELECT $t.bury_exhausted(100) AS n`)).toEqual([{ n: 0 }])
    expect(await leaseRows()).toBe(1)
    expect(await inFlight()).toBe(2)
  })

  it('a job taken again after its lease ran out counts once, under its new lease', async () => {
    await s.rows.queue({ name: 'default', globalCap: 5 })
    await s.rows.ready()
    const [first] = await s.claimed()
    await s.sql(endLeasesSql('$t'))
    expect(await inFlight()).toBe(0)
    const [again] = await s.claimed({ invocationId: 'inv-b' })
    expect(again?.id).toBe(first?.id)
    expect(again?.token).not.toBe(first?.token)
    // The old lease's row (the test moved the job to a row of its own to end its lease) still
    // names the job, but the job's lease is no longer that row's.
    expect(await leaseRows()).toBe(3)
    expect(await inFlight()).toBe(1)
    // The old holder's late settle matches nothing and leaves the new lease alone.
    const late = await s.run<SettleRow>(complete([first!]))
    expect(late[0]?.completed).toBe(0)
    expect(await inFlight()).toBe(1)
    // Maintenance deletes the old rows: their lease has ended and they hold no job.
    await s.sql(`SELECT $t.bury_exhausted(100)`)
    expect(await leaseRows()).toBe(1)
  })
})
