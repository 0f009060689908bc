import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import * as z from 'zod'
import { createSluice, defineJob, fromPg, type Sluice } from '../../src/index.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
import { migrate } from '../../src/migrate/run.js'
import { settle } from '../../src/sql/index.js'
import { pgPool, uniqueSchema } from '../helpers/db.js'
import { failureEntry, rowFactory } from '../helpers/rows.js'

// A database at an earlier migration (17, the schema before the attempts timeline's columns;
// 23, the last before jobs_ready left out leased jobs and jobs_leased was ordered by the lease's
// end; 25, the last before jobs_admit left them out too; 26, the last whose claim moved run_at to
// the lease's end, with no lease rows), its rows seeded as the code of that
// version wrote them, with jobs in every state a deploy can find them in: ready, retrying with
// errors written by the earlier settle, leased by a drain that died, leased by drains still
// running (a plain job, the holder of a concurrency slot with a job blocked behind it, an
// admitted job of a partition with another waiting, and one whose drain died). It upgrades to the
// current migrations and functions; the running drains settle after the upgrade; drains then take
// the rest. Every job completes exactly once.

describe.each([17, 23, 25, 26])('at migration %i', (BEFORE) => {
  const admin = pgPool(2)
  const pool = pgPool(4)
  const schema = uniqueSchema('flight')
  const t = `"${schema}"`
  /** Completions per tag: the drains' runs, and the settles of the drains that ran across the upgrade. */
  const runs = new Map<string, number>()
  const ran = (tag: string) => runs.set(tag, (runs.get(tag) ?? 0) + 1)

  const work = defineJob({
    name: 'work',
    queue: 'work',
    input: z.object({ tag: z.string() }),
    run: ({ tag }) => {
      ran(tag)
    },
  })
  const send = defineJob({
    name: 'send',
    queue: 'sends',
    input: z.object({ tag: z.string(), account: z.string() }),
    admission: { partition: (i) => i.account, concurrency: { max: 2 } },
    run: ({ tag }) => {
      ran(tag)
    },
  })

  let sluice: Sluice
  beforeAll(async () => {
    await migrate(
      fromPg(pool),
      schema,
      migrations.filter((m) => m.version <= BEFORE),
    )
    sluice = createSluice({ database: fromPg(pool), schema, jobs: [work, send] })
  })
  afterAll(async () => {
    await sluice?.close()
    await pool.end()
    await admin.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
    await admin.end()
  })

  test('jobs in flight upgrade and complete exactly once', async () => {
    const rows = rowFactory(admin, t, { leaseInRunAt: true })
    const job = (tag: string, p: Parameters<typeof rows.job>[0] = {}) =>
      rows.job({ queue: 'work', name: 'work', payload: { tag }, ...p })
    for (const tag of ['ready-1', 'ready-2']) await job(tag)
    await job('retrying', {
      attempts: 2,
      errors: [failureEntry(1), failureEntry(2)],
      lastError: failureEntry(2),
    })
    await job('dead-drain', { lease: { invocationId: 'drn_died', expiresInMs: -60_000 } })
    const live = [await job('live', { lease: { invocationId: 'drn_old', expiresInMs: 120_000 } })]
    // A concurrency slot held by a running job, and a job blocked behind it.
    await rows.semaphore({ key: 'acct', value: 1, limit: 1 })
    live.push(
      await job('slot-holder', {
        concurrencyKey: 'acct',
        lease: { invocationId: 'drn_old', expiresInMs: 120_000 },
      }),
    )
    await rows.blocked({ concurrencyKey: 'acct', queue: 'work', name: 'work', payload: { tag: 'blocked' } })
    // An admitted job running in its partition, and one waiting in it.
    await rows.partition({ policy: 'send', partitionKey: 'acme', queue: 'sends', maxInFlight: 2 })
    const admitted = (tag: string, lease?: { invocationId: string; expiresInMs: number }) =>
      rows.job({
        queue: 'sends',
        name: 'send',
        payload: { tag, account: 'acme' },
        policy: 'send',
        partitionKey: 'acme',
        ...(lease ? { lease } : {}),
      })
    live.push(await admitted('admitted-running', { invocationId: 'drn_old', expiresInMs: 120_000 }))
    await admitted('admitted-waiting')
    await admitted('admitted-dead-drain', { invocationId: 'drn_died', expiresInMs: -60_000 })
    const tags = [
      'ready-1',
      'ready-2',
      'retrying',
      'dead-drain',
      'live',
      'slot-holder',
      'blocked',
      'admitted-running',
      'admitted-waiting',
      'admitted-dead-drain',
    ]

    const result = await sluice.migrate()
    expect(result.applied).toEqual(migrations.filter((m) => m.version > BEFORE).map((m) => m.version))

    // The jobs in flight are counted as before the upgrade: the three leases still running (on
    // their lease rows since migration 0027), not the two whose drain died.
    const running = await admin.query(`SELECT count(*)::int AS n FROM ${t}.jobs
      WHERE lease_token IS NOT NULL AND lease_until > now()`)
    expect(running.rows).toEqual([{ n: 3 }])
    const counted = await admin.query(
      `SELECT count(*)::int AS n FROM ${t}.leased_jobs WHERE lease_until > now()`,
    )
    expect(counted.rows).toEqual([{ n: 3 }])

    // The drain that was running across the upgrade finishes its jobs with the new settle.
    const finished = settle(t, {
      completions: live.map((j) => ({
        id: j.id,
        token: j.token!,
        status: 'completed',
        durationMs: 5,
        waitMs: 0,
      })),
      failures: [],
      handBacks: [],
    })
    const [done] = (await admin.query(finished.text, finished.values as unknown[])).rows
    expect(done).toMatchObject({ completed: 3 })
    for (const tag of ['live', 'slot-holder', 'admitted-running']) ran(tag)

    // Drains take the rest; the blocked job is promoted when its key's slot frees.
    for (let i = 0; i < 10; i++) {
      const left = await admin.query(
        `SELECT (SELECT count(*) FROM ${t}.jobs) + (SELECT count(*) FROM ${t}.blocked) AS n`,
      )
      if (Number(left.rows[0].n) === 0) break
      await sluice.drain({ budgetMs: 10_000 })
    }
    expect(Object.fromEntries([...runs].sort())).toEqual(
      Object.fromEntries(tags.sort().map((tag) => [tag, 1])),
    )
    const archived = await admin.query(
      `SELECT payload->>'tag' AS tag, invocation FROM ${t}.archive ORDER BY 1`,
    )
    expect(archived.rows.map((r) => r.tag)).toEqual(tags.sort())
    // Rows settled by the new settle carry what the timeline reads, even for attempts claimed before it.
    expect(archived.rows.find((r) => r.tag === 'live')?.invocation).toBe('drn_old')
    expect(await admin.query(`SELECT 1 FROM ${t}.dead_letters`).then((r) => r.rows)).toEqual([])
    const retried = await sluice.inspect.job(
      (await admin.query(`SELECT id::text FROM ${t}.archive WHERE payload->>'tag' = 'retrying'`)).rows[0].id,
    )
    expect(retried?.timeline.map((a) => a.outcome)).toEqual(['failed', 'failed', 'completed'])
    // No lease row holds a job; maintenance deletes those of the leases that ran out (the drains
    // that died), and the semaphore gave its slot back.
    expect((await admin.query(`SELECT 1 FROM ${t}.leased_jobs`)).rows).toEqual([])
    await admin.query(`SELECT ${t}.bury_exhausted(100)`)
    expect((await admin.query(`SELECT 1 FROM ${t}.claim_leases`)).rows).toEqual([])
    expect((await admin.query(`SELECT value FROM ${t}.semaphores WHERE key = 'acct'`)).rows).toEqual([
      { value: 0 },
    ])
  })
})
