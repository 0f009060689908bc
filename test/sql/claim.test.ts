/**
 * The claim statement on seeded rows, one control at a time: what it takes, in which order, and
 * what it leaves. Assertions use only the columns ClaimRow promises.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ClaimedRow, type ClaimParams, type ClaimRow, claim } from '../../src/sql/index.js'
import { endLeasesSql } from '../helpers/db.js'
import { claimParams, type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

const params = claimParams
const claimRows = (p?: Partial<ClaimParams>): Promise<ClaimRow[]> => s.claimRows(p)
/** The jobs a claim took (rows with an id), in the order it returned them. */
const claimed = (p?: Partial<ClaimParams>): Promise<ClaimedRow[]> => s.claimed(p)

const ids = (rows: readonly { id: string | null }[]): (string | null)[] => rows.map((r) => r.id)

/**
 * One claim of up to `limit` jobs in a transaction of its own, and the server's count of the
 * jobs table's updates in that transaction, and of those that were heap-only (HOT).
 */
async function hotClaim(limit: number): Promise<{ claimed: number; updated: number; hot: number }> {
  const client = await s.pool.connect()
  try {
    await client.query('BEGIN')
    const rows = await s.run<ClaimRow>(claim(s.t, params({ limit })), client)
    const [stats] = (
      await client.query<{ updated: number; hot: number }>(
        `SELECT pg_stat_get_xact_tuples_updated('${s.t}.jobs'::regclass)::int AS updated,
                pg_stat_get_xact_tuples_hot_updated('${s.t}.jobs'::regclass)::int AS hot`,
      )
    ).rows
    await client.query('COMMIT')
    return { claimed: rows.filter((r) => r.id !== null).length, ...stats! }
  } finally {
    client.release()
  }
}
/** Ids as a set, for claims that take several jobs (the order of the rows is not promised). */
const sorted = (rows: readonly { id: string | null }[]): string[] =>
  rows.map((r) => String(r.id)).sort((a, b) => Number(a) - Number(b))

describe('claim: order and visibility', () => {
  it('takes due jobs by priority, then due time, then id', async () => {
    const late = await s.rows.ready({ priority: 10, dueAt: new Date(Date.now() - 60_000) })
    const urgent = await s.rows.ready({ priority: 5 })
    const oldest = await s.rows.ready({ priority: 10, dueAt: new Date(Date.now() - 120_000) })
    const [tie] = await s.sql<{ run_at: Date }>('SELECT run_at FROM $t.jobs WHERE id = $1', [oldest.id])
    const twin = await s.rows.ready({ priority: 10, dueAt: tie?.run_at })
    // The claim picks in that order; the rows it returns are a set (the drain sorts them).
    expect(sorted(await claimed({ limit: 2 }))).toEqual(sorted([urgent, oldest]))
    expect(ids(await claimed({ limit: 1, invocationId: 'inv-b' }))).toEqual([twin.id])
    expect(ids(await claimed({ limit: 1, invocationId: 'inv-c' }))).toEqual([late.id])
  })

  it('orders across queues as one list', async () => {
    // Each seed reads a later now(), so later seeds with later offsets keep their order.
    const a = await s.rows.ready({ queue: 'a', dueInMs: -3_000 })
    const b = await s.rows.ready({ queue: 'b', dueInMs: -2_000 })
    const a2 = await s.rows.ready({ queue: 'a', dueInMs: -1_000 })
    await s.rows.ready({ queue: 'other', dueInMs: -9_000 })
    expect(sorted(await claimed({ queues: ['a', 'b'], limit: 2 }))).toEqual(sorted([a, b]))
    expect(ids(await claimed({ queues: ['a', 'b'], invocationId: 'inv-b' }))).toEqual([a2.id])
  })

  it('skips jobs not due, jobs leased, and jobs with no attempts left', async () => {
    await s.rows.scheduled({ dueInMs: 60_000 })
    await s.rows.leased('inv-other')
    await s.rows.exhausted()
    const due = await s.rows.failed(2, { dueInMs: -10 })
    expect(ids(await claimed())).toEqual([due.id])
  })

  it('re-takes a job whose lease ran out', async () => {
    const lost = await s.rows.leased('inv-dead', { expiresInMs: -1_000 })
    const [row] = await claimed()
    expect(row?.id).toBe(lost.id)
    expect(row?.token).not.toBe(lost.token)
    expect(row?.attempts).toBe(2)
  })

  it('takes jobs whose lease ran out at their place among the waiting ones', async () => {
    // A lease keeps its job's place (run_at): once the lease has run out, the job is taken in the
    // same order as the jobs that were never leased, ahead of those due after it.
    const at = (ms: number) => new Date(Date.now() + ms)
    const first = await s.rows.ready({ priority: 0, dueAt: at(-10_000) })
    const lost = await s.rows.leased('inv-dead', { priority: 0, dueAt: at(-5_000), expiresInMs: -1 })
    const next = await s.rows.ready({ priority: 0, dueAt: at(-1_000) })
    const lower = await s.rows.ready({ priority: 5, dueAt: at(-60_000) })
    const lostLower = await s.rows.leased('inv-dead', { priority: 9, dueAt: at(-120_000), expiresInMs: -1 })
    await s.rows.leased('inv-live', { priority: 0, expiresInMs: 30_000 })
    expect(ids(await claimed({ limit: 2 }))).toEqual([first.id, lost.id])
    expect(ids(await claimed({ limit: 10, invocationId: 'inv-b' }))).toEqual([
      next.id,
      lower.id,
      lostLower.id,
    ])
  })

  it('leases each job with a HOT update: no index entry, the new version on its page', async () => {
    // Nothing a claim writes is indexed (migration 0027), and the table leaves room on its pages:
    // the claim's updates are heap-only, counted as such by the server in the claim's transaction.
    await s.sql(
      `INSERT INTO $t.jobs (queue, name, payload) SELECT 'default', 'work', '{}' FROM generate_series(1, 2000)`,
    )
    expect(await hotClaim(2000)).toEqual({ claimed: 2000, updated: 2000, hot: 2000 })
  })
})

describe('claim: jobs under an admission policy', () => {
  const job = { queue: 'default', name: 'send', policy: 'send', partitionKey: 'acme' }

  it('leases each admitted job with a HOT update too', async () => {
    await s.rows.partition({ policy: 'send', partitionKey: 'acme', queue: 'default', rate: null })
    await s.sql(
      `INSERT INTO $t.jobs (queue, name, payload, policy, partition_key)
       SELECT 'default', 'send', '{}', 'send', 'acme' FROM generate_series(1, 2000)`,
    )
    expect(await hotClaim(2000)).toEqual({ claimed: 2000, updated: 2000, hot: 2000 })
  })

  it('takes admitted jobs whose lease ran out at their place among the waiting ones', async () => {
    await s.rows.partition({ policy: 'send', partitionKey: 'acme', queue: 'default', rate: null })
    const at = (ms: number) => new Date(Date.now() + ms)
    const first = await s.rows.ready({ ...job, priority: 0, dueAt: at(-10_000) })
    const lost = await s.rows.leased('inv-dead', { ...job, priority: 0, dueAt: at(-5_000), expiresInMs: -1 })
    const next = await s.rows.ready({ ...job, priority: 0, dueAt: at(-1_000) })
    const lostLower = await s.rows.leased('inv-dead', {
      ...job,
      priority: 9,
      dueAt: at(-120_000),
      expiresInMs: -1,
    })
    await s.rows.leased('inv-live', { ...job, priority: 0, expiresInMs: 30_000 })
    expect(ids(await claimed({ limit: 2 }))).toEqual([first.id, lost.id])
    expect(ids(await claimed({ limit: 10, invocationId: 'inv-b' }))).toEqual([next.id, lostLower.id])
  })

  it('admits from a partition whose only due job is one whose lease ran out', async () => {
    await s.rows.partition({ policy: 'send', partitionKey: 'acme', queue: 'default', rate: null })
    await s.rows.leased('inv-live', { ...job, expiresInMs: 30_000 })
    await s.rows.scheduled(job)
    const lost = await s.rows.leased('inv-dead', { ...job, expiresInMs: -1_000 })
    expect(ids(await claimed())).toEqual([lost.id])
  })
})

describe('claim: the lease', () => {
  it('gives a fresh token, counts the attempt and hides the job for the lease', async () => {
    const job = await s.rows.failed(1, { dueInMs: -5_000, maxAttempts: 4 })
    const [before] = await s.sql<{ run_at: Date }>('SELECT run_at FROM $t.jobs WHERE id = $1', [job.id])
    const [row] = await claimed({ leaseMs: 45_000, jobsDone: 7 })
    expect(row).toMatchObject({ id: job.id, queue: 'default', name: 'work', attempts: 2, max_attempts: 4 })
    expect(row?.token).toMatch(/^[0-9a-f-]{36}$/)
    expect(row?.due_at.getTime()).toBe(before?.run_at.getTime())
    const [stored] = await s.sql<{
      lease_token: string
      leased_by: string
      hidden_ms: number
      attempts: number
    }>(
      `SELECT lease_token::text, leased_by, attempts,
              (extract(epoch FROM lease_until - now()) * 1000)::float8 AS hidden_ms FROM $t.jobs WHERE id = $1`,
      [job.id],
    )
    expect(stored).toMatchObject({ lease_token: row?.token, leased_by: 'inv-a', attempts: 2 })
    expect(stored?.hidden_ms).toBeGreaterThan(40_000)
    expect(stored?.hidden_ms).toBeLessThanOrEqual(45_000)
    // The invocation is registered with its lease and the count it reported.
    const [inv] = await s.sql<{ jobs_done: number; left_ms: number }>(
      `SELECT jobs_done, (extract(epoch FROM expires_at - now()) * 1000)::float8 AS left_ms FROM $t.invocations WHERE id = 'inv-a'`,
    )
    expect(inv?.jobs_done).toBe(7)
    expect(inv?.left_ms).toBeGreaterThan(40_000)
    // Taken: a second claim finds nothing.
    expect(await claimed({ invocationId: 'inv-b' })).toEqual([])
  })

  it("marks an until-executed lock as executing under the claimer's invocation", async () => {
    const job = await s.rows.uniqueQueued('order:1')
    expect(ids(await claimed())).toEqual([job.id])
    const [lock] = await s.sql('SELECT state, owner, job_id::text FROM $t.unique_locks')
    expect(lock).toEqual({ state: 'executing', owner: 'inv-a', job_id: job.id })
  })
})

describe('claim: queue state', () => {
  it('skips a paused queue and still serves the others', async () => {
    await s.rows.inPausedQueue('paused')
    const open = await s.rows.ready({ queue: 'open' })
    expect(ids(await claimed({ queues: ['paused', 'open'] }))).toEqual([open.id])
  })

  it('skips a queue whose breaker is open, and serves it once the breaker time passed', async () => {
    const job = await s.rows.behindOpenBreaker('flaky', 60_000)
    expect(await claimed({ queues: ['flaky'] })).toEqual([])
    await s.rows.queue({ name: 'flaky', breakerThreshold: 3, trips: 1, breakerOpenForMs: -1 })
    expect(ids(await claimed({ queues: ['flaky'] }))).toEqual([job.id])
  })

  it('skips a held queue until its hold ends', async () => {
    await s.rows.queue({ name: 'ordered', heldForMs: 60_000 })
    const job = await s.rows.ready({ queue: 'ordered' })
    expect(await claimed({ queues: ['ordered'] })).toEqual([])
    await s.rows.queue({ name: 'ordered', heldForMs: -1 })
    expect(ids(await claimed({ queues: ['ordered'] }))).toEqual([job.id])
  })

  it('leaves a queue to a live drain of higher priority', async () => {
    // The queue has its row, as every queue a Sluice knows does after migrate().
    await s.rows.queue({ name: 'shared' })
    const job = await s.rows.ready({ queue: 'shared' })
    await s.rows.invocation({ id: 'inv-high', queues: ['shared'], priority: 5 })
    expect(await claimed({ queues: ['shared'], invocationPriority: 4 })).toEqual([])
    // Equal priority shares the queue.
    expect(ids(await claimed({ queues: ['shared'], invocationPriority: 5 }))).toEqual([job.id])
  })

  it('leaves a queue with no queues row to a live drain of higher priority', async () => {
    // A queue unknown to migrate() and maintenance (enqueued from the edge before a sync).
    const job = await s.rows.ready({ queue: 'unsynced' })
    await s.rows.invocation({ id: 'inv-high', queues: ['unsynced'], priority: 5 })
    expect(await claimed({ queues: ['unsynced'], invocationPriority: 4 })).toEqual([])
    expect(ids(await claimed({ queues: ['unsynced'], invocationPriority: 5 }))).toEqual([job.id])
  })

  it('ignores a higher-priority drain whose invocation lease ran out', async () => {
    const job = await s.rows.ready({ queue: 'shared' })
    await s.rows.invocation({ id: 'inv-high', queues: ['shared'], priority: 5, expiresInMs: -1 })
    expect(ids(await claimed({ queues: ['shared'] }))).toEqual([job.id])
  })
})

describe('claim: global cap', () => {
  it('takes only the room the cap leaves next to the jobs in flight', async () => {
    await s.rows.queue({ name: 'capped', globalCap: 3 })
    await s.rows.leased('inv-other', { queue: 'capped' })
    // A lease that ran out is no longer in flight.
    await s.rows.leased('inv-dead', { queue: 'capped', expiresInMs: -1_000, maxAttempts: 1, attempts: 1 })
    const a = await s.rows.ready({ queue: 'capped', dueInMs: -2 })
    const b = await s.rows.ready({ queue: 'capped', dueInMs: -1 })
    await s.rows.ready({ queue: 'capped' })
    expect(sorted(await claimed({ queues: ['capped'] }))).toEqual(sorted([a, b]))
    expect(await claimed({ queues: ['capped'], invocationId: 'inv-b' })).toEqual([])
  })

  it('binds from the first claim after the cap is set, beside a queue without one', async () => {
    const plain = await s.rows.ready({ queue: 'plain', dueInMs: -3 })
    const first = await s.rows.ready({ queue: 'later', dueInMs: -2 })
    await s.rows.ready({ queue: 'later', dueInMs: -1 })
    // No cap on either queue yet: the claim takes what it is asked for.
    expect(sorted(await claimed({ queues: ['plain', 'later'], limit: 2 }))).toEqual(sorted([plain, first]))
    // A cap of 1 on `later`, whose one job in flight fills it; `plain` is not held back.
    await s.rows.queue({ name: 'later', globalCap: 1 })
    const next = await s.rows.ready({ queue: 'plain' })
    expect(ids(await claimed({ queues: ['plain', 'later'], invocationId: 'inv-b' }))).toEqual([next.id])
  })
})

describe('claim: single consumer', () => {
  it('claims nothing while another live drain holds the queue lease', async () => {
    await s.rows.inHeldSingleConsumer('serial', 'inv-holder')
    expect(await claimed({ queues: ['serial'] })).toEqual([])
    const [lease] = await s.sql('SELECT holder FROM $t.queue_leases')
    expect(lease).toEqual({ holder: 'inv-holder' })
  })

  it('takes a free queue lease, and none for a paused queue', async () => {
    await s.rows.queue({ name: 'serial', singleConsumer: true })
    await s.rows.queue({ name: 'paused-serial', singleConsumer: true, paused: true })
    const job = await s.rows.ready({ queue: 'serial' })
    await s.rows.ready({ queue: 'paused-serial' })
    expect(ids(await claimed({ queues: ['serial', 'paused-serial'] }))).toEqual([job.id])
    expect(await s.sql('SELECT queue, holder FROM $t.queue_leases')).toEqual([
      { queue: 'serial', holder: 'inv-a' },
    ])
  })

  it('takes an expired queue lease over, and marks the rows to be run in order (others not)', async () => {
    await s.rows.queue({ name: 'serial', singleConsumer: true })
    await s.rows.queueLease({ queue: 'serial', holder: 'inv-dead', expiresInMs: -1 })
    const job = await s.rows.ready({ queue: 'serial' })
    const plain = await s.rows.ready({ queue: 'plain' })
    const rows = await claimed({ queues: ['serial', 'plain'] })
    expect(rows.map((r) => [r.id, r.in_order]).sort()).toEqual(
      [
        [job.id, true],
        [plain.id, false],
      ].sort(),
    )
    const [lease] = await s.sql('SELECT holder FROM $t.queue_leases')
    expect(lease).toEqual({ holder: 'inv-a' })
  })

  it('takes an expired queue lease over only once the jobs the holder had leased are free again', async () => {
    await s.rows.queue({ name: 'serial', singleConsumer: true })
    await s.rows.queueLease({ queue: 'serial', holder: 'inv-dead', expiresInMs: -1 })
    const running = await s.rows.leased('inv-dead', { queue: 'serial', expiresInMs: 10_000 })
    const after = await s.rows.ready({ queue: 'serial' })
    expect(await claimed({ queues: ['serial'] })).toEqual([])
    await s.sql(endLeasesSql('$t', 'id = $1'), [running.id])
    // Its lease ran out: the next claim takes it at its place, ahead of the job after it (the
    // claim's rows are a set; their due times give the order the drain runs them in).
    const rows = await claimed({ queues: ['serial'] })
    expect(rows.sort((a, b) => a.due_at.getTime() - b.due_at.getTime()).map((r) => r.id)).toEqual([
      running.id,
      after.id,
    ])
  })
})

describe('claim: while-executing keys', () => {
  it('takes only the first job of a key and locks the key for it', async () => {
    const first = await s.rows.ready({ exclusiveKey: 'k', dueInMs: -5 })
    await s.rows.ready({ exclusiveKey: 'k', dueInMs: -4 })
    const plain = await s.rows.ready({ dueInMs: -3 })
    await s.rows.ready({ exclusiveKey: 'k', dueInMs: -2 })
    const other = await s.rows.ready({ exclusiveKey: 'other', dueInMs: -1 })
    expect(sorted(await claimed())).toEqual(sorted([first, plain, other]))
    const locks = await s.sql('SELECT key, job_id::text, owner, strategy FROM $t.unique_locks ORDER BY key')
    expect(locks).toEqual([
      { key: 'k', job_id: first.id, owner: 'inv-a', strategy: 'while-executing' },
      { key: 'other', job_id: other.id, owner: 'inv-a', strategy: 'while-executing' },
    ])
    // The ones left behind are untouched: not leased, attempt not counted.
    const left = await s.sql(
      'SELECT count(*)::int AS n FROM $t.jobs WHERE lease_token IS NULL AND attempts = 0',
    )
    expect(left).toEqual([{ n: 2 }])
  })

  it('skips a key whose lock another running job holds, and takes it once the lock expired', async () => {
    const { waiting } = await s.rows.exclusiveBlocked('k', 'inv-other')
    expect(await claimed()).toEqual([])
    await s.sql(`UPDATE $t.unique_locks SET expires_at = now() - interval '1 second'`)
    expect(ids(await claimed())).toEqual([waiting.id])
    const [lock] = await s.sql('SELECT job_id::text, owner FROM $t.unique_locks')
    expect(lock).toEqual({ job_id: waiting.id, owner: 'inv-a' })
  })
})

describe('claim: deferred names', () => {
  it('stops each queue before the first job it cannot fit, and reports it in a row with a null id', async () => {
    const a = await s.rows.ready({ queue: 'q', name: 'quick', dueInMs: -3 })
    await s.rows.ready({ queue: 'q', name: 'slow', dueInMs: -2 })
    await s.rows.ready({ queue: 'q', name: 'quick', dueInMs: -1 })
    const elsewhere = await s.rows.ready({ queue: 'r', name: 'quick' })
    const rows = await claimRows({ queues: ['q', 'r'], defer: ['slow'] })
    const cut = rows.filter((r) => r.id === null)
    expect(cut.map((r) => ({ queue: r.queue, name: r.name }))).toEqual([{ queue: 'q', name: 'slow' }])
    expect(sorted(rows.filter((r) => r.id !== null))).toEqual(sorted([a, elsewhere]))
    // Nothing behind the cut was touched.
    const leased = await s.sql<{ n: number }>(
      'SELECT count(*)::int AS n FROM $t.jobs WHERE lease_token IS NOT NULL',
    )
    expect(leased[0]?.n).toBe(2)
  })

  it('returns only the cut row when the first due job does not fit', async () => {
    await s.rows.ready({ name: 'slow' })
    await s.rows.ready({ name: 'quick', dueInMs: 10 })
    const rows = await claimRows({ defer: ['slow'] })
    expect(rows.map((r) => [r.id, r.name])).toEqual([[null, 'slow']])
  })
})
