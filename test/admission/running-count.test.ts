/**
 * The claim counts each admitting partition's running jobs on the partition's lease rows
 * (claim_leases_partition), whatever the statistics say, and never reads the jobs table whole.
 * Statistics taken while no job ran (autovacuum's, or an operator's ANALYZE) once made an index
 * of every leased job look the cheaper one: each partition's count then read every running job,
 * three times, and a drain under a policy ran four times slower. The indexes and scans each claim
 * used are read from PostgreSQL's statistics.
 */
import pg from 'pg'
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineJob } from '../../src/index.js'
import { claim } from '../../src/sql/claim.js'
import { readyBacklog } from '../../src/sql/wake.js'
import { databaseUrl, uniqueSchema } from '../helpers/db.js'

const job = defineJob({
  name: 'tenant-work',
  queue: 'tenants',
  input: z.object({ n: z.number() }),
  admission: { partition: (i) => `t${i.n % 20}`, concurrency: { max: 5 }, fair: true },
  run: () => {},
})

let cleanup: (() => Promise<void>) | undefined
afterEach(async () => {
  await cleanup?.()
  cleanup = undefined
})

test("after statistics taken while nothing ran, claims count running jobs on their partitions' lease rows only", async () => {
  const schema = uniqueSchema('running')
  const t = `"${schema}"`
  const sluice = createSluice({ database: databaseUrl, schema, jobs: [job], env: {} })
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  cleanup = async () => {
    await client.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
    await client.end()
    await sluice.close()
  }
  await sluice.migrate()
  await sluice.enqueueMany(
    job,
    Array.from({ length: 2_000 }, (_, n) => ({ n })),
  )
  await client.query(`VACUUM ANALYZE ${t}.jobs`)

  // Scans of the partitions' lease rows; entries read from the queues' (what a count of a
  // queue's running jobs reads: every one of them); sequential scans of the jobs table.
  const scans = async (): Promise<Record<string, number>> => {
    // This session's counters reach the shared statistics once it is idle after this call.
    await client.query('SELECT pg_stat_force_next_flush()')
    await client.query('SELECT pg_stat_clear_snapshot()')
    const { rows } = await client.query<{ name: string; n: string }>(
      `SELECT indexrelname AS name,
              CASE indexrelname WHEN 'claim_leases_queue' THEN idx_tup_read ELSE idx_scan END AS n
       FROM pg_stat_user_indexes
       WHERE schemaname = $1 AND indexrelname IN ('claim_leases_queue', 'claim_leases_partition')
       UNION ALL
       SELECT 'jobs_seq', seq_scan FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'jobs'`,
      [schema],
    )
    return Object.fromEntries(rows.map((r) => [r.name, Number(r.n)]))
  }
  const claimOnce = async (i: number): Promise<number> => {
    const statement = claim(t, {
      queues: ['tenants'],
      limit: 50,
      leaseMs: 60_000,
      invocationId: `drn_running_${i}`,
      invocationPriority: 0,
      jobsDone: 0,
    })
    const { rows } = await client.query(statement.text, statement.values as unknown[])
    return rows.filter((r) => r.id !== null).length
  }

  // The first claim leases jobs in every partition; the next ones count them.
  expect(await claimOnce(0)).toBe(50)
  const before = await scans()
  let claimed = 0
  for (let i = 1; i <= 3; i++) claimed += await claimOnce(i)
  const after = await scans()
  // 20 partitions, 5 running at most in each: 100 jobs in all, whatever the claims' turns.
  expect(claimed).toBe(50)
  expect(after.claim_leases_partition! - before.claim_leases_partition!).toBeGreaterThan(0)
  expect(after.claim_leases_queue! - before.claim_leases_queue!).toBe(0)
  expect(after.jobs_seq! - before.jobs_seq!).toBe(0)

  // The ready backlog (a drain's last statement, the wake task) counts them the same way: every
  // partition is at its cap, so nothing is ready.
  const ready = readyBacklog(t, ['tenants'], 100)
  const { rows } = await client.query(ready.text, ready.values as unknown[])
  expect(rows.filter((r) => r.queue === 'tenants' && Number(r.n) > 0)).toEqual([])
  const last = await scans()
  expect(last.claim_leases_partition! - after.claim_leases_partition!).toBeGreaterThan(0)
  expect(last.claim_leases_queue! - after.claim_leases_queue!).toBe(0)
  expect(last.jobs_seq! - after.jobs_seq!).toBe(0)
})
