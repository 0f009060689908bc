/**
 * Every read of an admission policy's jobs can be a walk of an index, never only a scan of the
 * jobs table. The admit index holds a policy's jobs leased or not (migration 0027), and the jobs
 * in flight are counted on their lease rows (claim_leases), so no read needs to scan the table.
 * Each read
 * runs with sequential scans off (so a read no index can serve still shows as one) in a
 * transaction whose scans PostgreSQL counts (pg_stat_xact_user_tables counts those of the
 * functions it calls too).
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import type { Statement } from '../../src/index.js'
import { partitionMetricsSelect, partitions, policies, pruneIdlePartitions } from '../../src/sql/admission.js'
import { claim } from '../../src/sql/claim.js'
import { overview } from '../../src/sql/overview.js'
import { readyBacklog } from '../../src/sql/wake.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeAll(async () => {
  s = await sqlSchema()
  for (let p = 0; p < 40; p++)
    await s.rows.partition({
      policy: 'send',
      partitionKey: `k${p}`,
      queue: 'mail',
      rate: null,
      maxInFlight: 10,
    })
  // 40,000 waiting jobs, a few in flight in each partition and a few whose lease ran out.
  await s.sql(
    `INSERT INTO $t.jobs (queue, name, payload, policy, partition_key, run_at)
     SELECT 'mail', 'send', '{}', 'send', 'k' || (i % 40), now() - (i % 500) * interval '1 second'
     FROM generate_series(1, 40000) i`,
  )
  // Statistics taken before any job ran, as autovacuum may leave them.
  await s.sql('VACUUM ANALYZE $t.jobs')
  await s.sql(
    `WITH leased AS (
       UPDATE $t.jobs SET lease_token = gen_random_uuid(), leased_by = 'inv',
              lease_until = now() + CASE WHEN id % 2 = 0 THEN interval '1 minute' ELSE interval '-1 minute' END
       WHERE id % 1000 < 4
       RETURNING id, queue, policy, partition_key, lease_token, lease_until
     )
     INSERT INTO $t.claim_leases (token, queue, policy, partition_key, lease_until, ids)
     SELECT lease_token, queue, policy, partition_key, lease_until, ARRAY[id] FROM leased`,
  )
}, 120_000)
afterAll(async () => {
  await s.cleanup()
})

/** Runs `statement` in a transaction rolled back after; returns the scans of jobs it made. */
async function jobsSeqScans(statement: Statement): Promise<number> {
  const client: pg.PoolClient = await s.pool.connect()
  // The backend's counts not yet flushed to the shared statistics, earlier transactions' included.
  const scans = async () =>
    Number(
      (
        await client.query<{ n: string }>(
          `SELECT seq_scan::text AS n FROM pg_stat_xact_user_tables WHERE relid = '${s.t}.jobs'::regclass`,
        )
      ).rows[0]?.n ?? 0,
    )
  try {
    await client.query('BEGIN')
    // Whether an index can serve each read, whatever the planner would prefer on this table.
    await client.query('SET LOCAL enable_seqscan = off')
    const before = await scans()
    await client.query(statement.text, statement.values as unknown[])
    return (await scans()) - before
  } finally {
    await client.query('ROLLBACK')
    client.release()
  }
}

describe('reads of admitted jobs walk indexes', () => {
  test.each<[string, () => Statement]>([
    [
      'a claim',
      () =>
        claim(s.t, {
          queues: ['mail'],
          limit: 50,
          leaseMs: 30_000,
          invocationId: 'inv-reads',
          invocationPriority: 0,
          jobsDone: 0,
        }),
    ],
    ['the ready backlog', () => readyBacklog(s.t, ['mail'], 1_000)],
    ['the policies', () => policies(s.t)],
    ['a page of partitions', () => partitions(s.t, 'send', 50, 0)],
    [
      'the partitions /metrics exports',
      () => ({ text: partitionMetricsSelect(s.t, '$1', '$2'), values: [100, 1_000] }),
    ],
    ['the idle partitions pruned', () => pruneIdlePartitions(s.t, 0, 100)],
  ])('%s', async (_, statement) => {
    expect(await jobsSeqScans(statement())).toBe(0)
  })

  test("the overview's counts of a large table", async () => {
    // Limits that make this table a large one: its states are counted on indexes, and sampled
    // (a sample scan, not a sequential one). Seq scans off: a read no index can serve is one.
    const limits = { exactPages: 10, exactRows: 2_000, samplePages: 20 }
    const statement = overview(s.t, s.schema, ['mail'], limits)
    // The statement calls the overview function: its plan is the function's body, read back from
    // the catalog and explained with the same arguments.
    const [{ body }] = (
      await s.pool.query<{ body: string }>(
        `SELECT p.prosrc AS body FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1 AND p.proname = 'overview'`,
        [s.schema],
      )
    ).rows as [{ body: string }]
    const client = await s.pool.connect()
    let plan: Record<string, unknown> | undefined
    try {
      await client.query('BEGIN')
      await client.query('SET LOCAL enable_seqscan = off')
      ;[plan] = (await client.query(`EXPLAIN (FORMAT JSON) ${body}`, statement.values as unknown[])).rows
    } finally {
      await client.query('ROLLBACK')
      client.release()
    }
    const scans: string[] = []
    const walk = (node: Record<string, unknown>): void => {
      if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'jobs') scans.push(String(node.Alias))
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child)
    }
    walk((plan!['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan)
    expect(scans).toEqual([])
  })
})
