/**
 * The settle statement on seeded rows: completions, failures and hand-backs, each matched on
 * (id, lease token), and what they do to slots, locks, breakers and batches.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  type ClaimParams,
  type Completion,
  type Failure,
  type HandBack,
  type SettleAndClaimRow,
  type SettleParams,
  type SettleRow,
  settle,
  settleAndClaim,
} from '../../src/sql/index.js'
import type { SeededJob } from '../helpers/rows.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

const INV = 'inv-a'

async function settled(p: Partial<SettleParams>): Promise<SettleRow> {
  const [row] = await s.run<SettleRow>(settle(s.t, { completions: [], failures: [], handBacks: [], ...p }))
  if (!row) throw new Error('settle returned no row')
  return row
}

const done = (job: SeededJob, p: Partial<Completion> = {}): Completion => ({
  id: job.id,
  token: String(job.token),
  status: 'completed',
  durationMs: 25,
  waitMs: 7,
  ...p,
})

const fail = (job: SeededJob, p: Partial<Failure> = {}): Failure => ({
  id: job.id,
  token: String(job.token),
  error: { name: 'TypeError', message: 'boom' },
  delayMs: 60_000,
  final: false,
  durationMs: 12,
  waitMs: 3,
  ...p,
})

const back = (job: SeededJob, dueAt: Date): HandBack => ({ id: job.id, token: String(job.token), dueAt })

const counts = (row: SettleRow) => ({
  completed: row.completed,
  retried: row.retried,
  dead: row.dead,
  handed_back: row.handed_back,
})

async function jobRow(id: string) {
  const [row] = await s.sql<{
    attempts: number
    lease_token: string | null
    leased_by: string | null
    due_in_ms: number
    last_error: Record<string, unknown> | null
    errors: Record<string, unknown>[]
  }>(
    `SELECT attempts, lease_token::text, leased_by, last_error, errors,
            (extract(epoch FROM run_at - now()) * 1000)::float8 AS due_in_ms
     FROM $t.jobs WHERE id = $1`,
    [id],
  )
  return row
}

describe('settle: completions', () => {
  it('moves a completed job to the archive and records its stats', async () => {
    const job = await s.rows.leased(INV, { attempts: 2, name: 'mail', queue: 'q' })
    expect(counts(await settled({ completions: [done(job)] }))).toEqual({
      completed: 1,
      retried: 0,
      dead: 0,
      handed_back: 0,
    })
    expect(await jobRow(job.id)).toBeUndefined()
    const archive = await s.sql(
      'SELECT id::text, queue, name, status, attempts, duration_ms, wait_ms FROM $t.archive',
    )
    expect(archive).toEqual([
      {
        id: job.id,
        queue: 'q',
        name: 'mail',
        status: 'completed',
        attempts: 2,
        duration_ms: '25',
        wait_ms: '7',
      },
    ])
    const stats = await s.sql('SELECT name, queue, status, jobs, durations, waits FROM $t.job_stats')
    expect(stats).toEqual([
      { name: 'mail', queue: 'q', status: 'completed', jobs: 1, durations: ['25'], waits: ['7'] },
    ])
  })

  it('archives an expired job as expired', async () => {
    const job = await s.rows.leased(INV)
    await settled({ completions: [done(job, { status: 'expired', durationMs: null })] })
    expect(await s.sql('SELECT status, duration_ms FROM $t.archive')).toEqual([
      { status: 'expired', duration_ms: null },
    ])
    expect(await s.sql('SELECT status FROM $t.job_stats')).toEqual([{ status: 'expired' }])
  })
})

describe('settle: invoked children', () => {
  it('names the queue of a parent once its last child has ended, and nothing before', async () => {
    const parent = await s.rows.job({ name: 'flow', queue: 'flows', dueInMs: 3_600_000 })
    const children = [
      await s.rows.leased(INV, { queue: 'work' }),
      await s.rows.leased(INV, { queue: 'work' }),
    ]
    await s.sql('UPDATE $t.jobs SET waiting = 2 WHERE id = $1', [parent.id])
    for (const [seq, child] of children.entries()) {
      await s.sql('UPDATE $t.jobs SET parent_id = $1 WHERE id = $2', [parent.id, child.id])
      await s.sql(
        `INSERT INTO $t.job_steps (job_id, seq, name, kind, state, child_id) VALUES ($1, $2, $3, 'invoke', 'waiting', $4)`,
        [parent.id, seq, `child-${seq}`, child.id],
      )
    }
    expect(await settled({ completions: [done(children[0]!)] })).toMatchObject({
      completed: 1,
      resumed: null,
    })
    expect(await settled({ failures: [fail(children[1]!, { final: true })] })).toMatchObject({
      dead: 1,
      resumed: ['flows'],
    })
    const [due] = await s.sql<{ due: boolean }>('SELECT run_at <= now() AS due FROM $t.jobs WHERE id = $1', [
      parent.id,
    ])
    expect(due).toEqual({ due: true })
  })
})

describe('settle: failures', () => {
  it('reschedules a failure after its backoff, with the error in its history', async () => {
    const job = await s.rows.leased(INV, { attempts: 2, errors: [{ attempt: 1, message: 'first' }] })
    expect(counts(await settled({ failures: [fail(job, { delayMs: 60_000 })] }))).toMatchObject({
      retried: 1,
    })
    const row = await jobRow(job.id)
    expect(row).toMatchObject({ attempts: 2, lease_token: null, leased_by: null })
    expect(row?.due_in_ms).toBeGreaterThan(55_000)
    expect(row?.due_in_ms).toBeLessThanOrEqual(60_000)
    expect(row?.last_error).toMatchObject({ name: 'TypeError', message: 'boom', attempt: 2 })
    expect(row?.errors.map((e) => e.attempt)).toEqual([1, 2])
    expect(await s.sql('SELECT status, duration_ms FROM $t.job_stats_runs')).toEqual([
      { status: 'failed', duration_ms: '12' },
    ])
  })

  it('keeps the last 10 errors only', async () => {
    const job = await s.rows.failed(10, { maxAttempts: 20 })
    await s.sql(
      `UPDATE $t.jobs SET lease_token = gen_random_uuid(), leased_by = $1, attempts = 11 WHERE id = $2`,
      [INV, job.id],
    )
    const [leased] = await s.sql<{ token: string }>(
      'SELECT lease_token::text AS token FROM $t.jobs WHERE id = $1',
      [job.id],
    )
    await settled({ failures: [fail({ id: job.id, token: String(leased?.token) })] })
    const row = await jobRow(job.id)
    expect(row?.errors.map((e) => e.attempt)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
  })

  it('dead-letters a job out of attempts, with its history capped at 10', async () => {
    const errors = Array.from({ length: 10 }, (_, i) => ({ attempt: i + 1, message: `m${i + 1}` }))
    const job = await s.rows.leased(INV, { attempts: 11, maxAttempts: 11, errors })
    expect(counts(await settled({ failures: [fail(job)] }))).toMatchObject({ dead: 1, retried: 0 })
    expect(await jobRow(job.id)).toBeUndefined()
    const [dead] = await s.sql<{
      attempts: number
      last_error: { attempt: number }
      errors: { attempt: number }[]
    }>('SELECT attempts, last_error, errors FROM $t.dead_letters WHERE id = $1', [job.id])
    expect(dead?.attempts).toBe(11)
    expect(dead?.last_error).toMatchObject({ attempt: 11, message: 'boom' })
    expect(dead?.errors.map((e) => e.attempt)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    expect(await s.sql('SELECT status FROM $t.job_stats')).toEqual([{ status: 'dead' }])
  })

  it('dead-letters a final failure whatever attempts remain', async () => {
    const job = await s.rows.leased(INV, { attempts: 1, maxAttempts: 5 })
    expect(counts(await settled({ failures: [fail(job, { final: true })] }))).toMatchObject({ dead: 1 })
    expect(await s.sql('SELECT id::text FROM $t.dead_letters')).toEqual([{ id: job.id }])
  })

  it('keeps the place of a single-consumer job and holds its queue for the backoff', async () => {
    await s.rows.queue({ name: 'serial', singleConsumer: true })
    const job = await s.rows.leased(INV, { queue: 'serial' })
    const dueAt = new Date(Date.now() - 3_600_000)
    await settled({ failures: [fail(job, { delayMs: 30_000, keepPlace: dueAt })] })
    const [row] = await s.sql<{ run_at: Date }>('SELECT run_at FROM $t.jobs WHERE id = $1', [job.id])
    expect(row?.run_at.getTime()).toBe(dueAt.getTime())
    const [queue] = await s.sql<{ held_ms: number }>(
      `SELECT (extract(epoch FROM held_until - now()) * 1000)::float8 AS held_ms FROM $t.queues WHERE name = 'serial'`,
    )
    expect(queue?.held_ms).toBeGreaterThan(25_000)
    expect(queue?.held_ms).toBeLessThanOrEqual(30_000)
  })
})

describe('settle: hand-backs', () => {
  it('puts an unstarted job back in its place with the attempt uncounted', async () => {
    const job = await s.rows.leased(INV, { attempts: 3 })
    const dueAt = new Date(Date.now() - 3_600_000)
    expect(counts(await settled({ handBacks: [back(job, dueAt)] }))).toMatchObject({ handed_back: 1 })
    const [row] = await s.sql<{ run_at: Date; attempts: number; lease_token: string | null }>(
      'SELECT run_at, attempts, lease_token::text FROM $t.jobs WHERE id = $1',
      [job.id],
    )
    expect(row).toEqual({ run_at: dueAt, attempts: 2, lease_token: null })
    expect(await s.sql('SELECT * FROM $t.job_stats')).toEqual([])
  })

  it('gives an until-executed lock back to the queued job and drops a while-executing one', async () => {
    const unique = await s.rows.leased(INV, { uniqueKey: 'u' })
    await s.rows.uniqueLock({
      key: 'u',
      jobId: unique.id,
      strategy: 'until-executed',
      state: 'executing',
      owner: INV,
    })
    const exclusive = await s.rows.leased(INV, { exclusiveKey: 'x' })
    await s.rows.uniqueLock({ key: 'x', jobId: exclusive.id, strategy: 'while-executing', owner: INV })
    await settled({ handBacks: [back(unique, new Date()), back(exclusive, new Date())] })
    expect(await s.sql('SELECT key, state, owner FROM $t.unique_locks')).toEqual([
      { key: 'u', state: 'queued', owner: null },
    ])
  })
})

describe('settle: lease tokens', () => {
  it('changes nothing for a token that no longer holds the job', async () => {
    const a = await s.rows.leased(INV, { attempts: 1 })
    const b = await s.rows.leased(INV, { attempts: 1 })
    const c = await s.rows.leased(INV, { attempts: 1 })
    const stale = '00000000-0000-4000-8000-000000000000'
    const before = await s.sql('SELECT * FROM $t.jobs ORDER BY id')
    const row = await settled({
      completions: [done({ id: a.id, token: stale })],
      failures: [fail({ id: b.id, token: stale }, { final: true })],
      handBacks: [back({ id: c.id, token: stale }, new Date(0))],
    })
    expect(counts(row)).toEqual({ completed: 0, retried: 0, dead: 0, handed_back: 0 })
    expect(await s.sql('SELECT * FROM $t.jobs ORDER BY id')).toEqual(before)
    expect(await s.sql('SELECT 1 FROM $t.archive UNION ALL SELECT 1 FROM $t.dead_letters')).toEqual([])
  })
})

describe('settle: slots and locks', () => {
  it("gives a finished job's concurrency slot to the next blocked job", async () => {
    await s.rows.semaphore({ key: 'acct:1', value: 1, limit: 1 })
    const running = await s.rows.leased(INV, { concurrencyKey: 'acct:1' })
    const waiting = await s.rows.blocked({ concurrencyKey: 'acct:1' })
    await settled({ completions: [done(running)] })
    expect(await s.sql('SELECT id::text FROM $t.jobs')).toEqual([{ id: waiting.toString() }])
    expect(await s.sql('SELECT * FROM $t.blocked')).toEqual([])
    expect(await s.sql('SELECT value FROM $t.semaphores')).toEqual([{ value: 1 }])
  })

  it('frees the slot when nothing waits, on a dead letter too', async () => {
    await s.rows.semaphore({ key: 'acct:1', value: 2, limit: 2 })
    const a = await s.rows.leased(INV, { concurrencyKey: 'acct:1' })
    const b = await s.rows.leased(INV, { concurrencyKey: 'acct:1' })
    await settled({ completions: [done(a)], failures: [fail(b, { final: true })] })
    expect(await s.sql('SELECT value FROM $t.semaphores')).toEqual([{ value: 0 }])
  })

  it('keeps the slot of a job that will retry', async () => {
    await s.rows.semaphore({ key: 'acct:1', value: 1, limit: 1 })
    const job = await s.rows.leased(INV, { concurrencyKey: 'acct:1' })
    await settled({ failures: [fail(job)] })
    expect(await s.sql('SELECT value FROM $t.semaphores')).toEqual([{ value: 1 }])
  })

  it('releases an until-executed lock when the job completes, and keeps it while it retries', async () => {
    const retrying = await s.rows.leased(INV, { uniqueKey: 'r' })
    await s.rows.uniqueLock({
      key: 'r',
      jobId: retrying.id,
      strategy: 'until-executed',
      state: 'executing',
      owner: INV,
    })
    const finishing = await s.rows.leased(INV, { uniqueKey: 'f' })
    await s.rows.uniqueLock({
      key: 'f',
      jobId: finishing.id,
      strategy: 'until-executed',
      state: 'executing',
      owner: INV,
    })
    await settled({ completions: [done(finishing)], failures: [fail(retrying)] })
    expect(await s.sql('SELECT key FROM $t.unique_locks')).toEqual([{ key: 'r' }])
  })

  it('releases an until-executed lock when the job is dead-lettered', async () => {
    const job = await s.rows.leased(INV, { uniqueKey: 'd', attempts: 5, maxAttempts: 5 })
    await s.rows.uniqueLock({
      key: 'd',
      jobId: job.id,
      strategy: 'until-executed',
      state: 'executing',
      owner: INV,
    })
    await settled({ failures: [fail(job)] })
    expect(await s.sql('SELECT key FROM $t.unique_locks')).toEqual([])
  })

  it('releases a while-executing lock when the attempt ends, failed or not', async () => {
    const ok = await s.rows.leased(INV, { exclusiveKey: 'a' })
    await s.rows.uniqueLock({ key: 'a', jobId: ok.id, strategy: 'while-executing', owner: INV })
    const ko = await s.rows.leased(INV, { exclusiveKey: 'b' })
    await s.rows.uniqueLock({ key: 'b', jobId: ko.id, strategy: 'while-executing', owner: INV })
    await settled({ completions: [done(ok)], failures: [fail(ko)] })
    expect(await s.sql('SELECT key FROM $t.unique_locks')).toEqual([])
  })

  it('never releases a lock that another job holds under the same key', async () => {
    const job = await s.rows.leased(INV, { exclusiveKey: 'k' })
    const other = await s.rows.leased('inv-b', { exclusiveKey: 'k' })
    await s.rows.uniqueLock({ key: 'k', jobId: other.id, strategy: 'while-executing', owner: 'inv-b' })
    await settled({ completions: [done(job)] })
    expect(await s.sql('SELECT job_id::text FROM $t.unique_locks')).toEqual([{ job_id: other.id }])
  })
})

describe('settle: circuit breaker', () => {
  async function breaker() {
    const [row] = await s.sql<{ consecutive_failures: number; trips: number; open_ms: number | null }>(
      `SELECT consecutive_failures, trips,
              (extract(epoch FROM breaker_until - now()) * 1000)::float8 AS open_ms
       FROM $t.queues WHERE name = 'flaky'`,
    )
    return row
  }

  it('counts failures and trips at the threshold for base × 2^trips', async () => {
    await s.rows.queue({
      name: 'flaky',
      breakerThreshold: 3,
      breakerBaseMs: 10_000,
      breakerCapMs: 600_000,
      trips: 2,
    })
    const a = await s.rows.leased(INV, { queue: 'flaky' })
    await settled({ failures: [fail(a)] })
    expect(await breaker()).toMatchObject({ consecutive_failures: 1, trips: 2, open_ms: null })
    const b = await s.rows.leased(INV, { queue: 'flaky' })
    const c = await s.rows.leased(INV, { queue: 'flaky', attempts: 5 })
    await settled({ failures: [fail(b), fail(c)] })
    const tripped = await breaker()
    expect(tripped).toMatchObject({ consecutive_failures: 0, trips: 3 })
    expect(tripped?.open_ms).toBeGreaterThan(35_000)
    expect(tripped?.open_ms).toBeLessThanOrEqual(40_000)
  })

  it('caps the open time', async () => {
    await s.rows.queue({
      name: 'flaky',
      breakerThreshold: 1,
      breakerBaseMs: 10_000,
      breakerCapMs: 15_000,
      trips: 30,
    })
    await settled({ failures: [fail(await s.rows.leased(INV, { queue: 'flaky' }))] })
    expect((await breaker())?.open_ms).toBeLessThanOrEqual(15_000)
    expect((await breaker())?.open_ms).toBeGreaterThan(10_000)
  })

  it('resets failures and trips on a success', async () => {
    await s.rows.queue({ name: 'flaky', breakerThreshold: 3, consecutiveFailures: 2, trips: 4 })
    await settled({ completions: [done(await s.rows.leased(INV, { queue: 'flaky' }))] })
    expect(await breaker()).toMatchObject({ consecutive_failures: 0, trips: 0 })
  })

  it('resets trips left from an earlier opening on a success, with no failure counted since', async () => {
    await s.rows.queue({ name: 'flaky', breakerThreshold: 3, consecutiveFailures: 0, trips: 2 })
    await settled({ completions: [done(await s.rows.leased(INV, { queue: 'flaky' }))] })
    expect(await breaker()).toMatchObject({ consecutive_failures: 0, trips: 0 })
  })

  it("counts a queue's failure until its own success resets it, whatever other queues settle", async () => {
    await s.rows.queue({ name: 'flaky', breakerThreshold: 3 })
    await s.rows.queue({ name: 'other', breakerThreshold: 3 })
    const counted = () =>
      s.sql(`SELECT name, consecutive_failures FROM $t.queues WHERE name IN ('flaky', 'other') ORDER BY name`)
    await settled({ completions: [done(await s.rows.leased(INV, { queue: 'flaky' }))] })
    await settled({ failures: [fail(await s.rows.leased(INV, { queue: 'other' }))] })
    expect(await counted()).toEqual([
      { name: 'flaky', consecutive_failures: 0 },
      { name: 'other', consecutive_failures: 1 },
    ])
    await settled({ completions: [done(await s.rows.leased(INV, { queue: 'flaky' }))] })
    expect(await counted()).toEqual([
      { name: 'flaky', consecutive_failures: 0 },
      { name: 'other', consecutive_failures: 1 },
    ])
    await settled({ completions: [done(await s.rows.leased(INV, { queue: 'other' }))] })
    expect(await counted()).toEqual([
      { name: 'flaky', consecutive_failures: 0 },
      { name: 'other', consecutive_failures: 0 },
    ])
  })

  it('leaves a queue without a breaker alone', async () => {
    await s.rows.queue({ name: 'flaky' })
    await settled({ failures: [fail(await s.rows.leased(INV, { queue: 'flaky' }))] })
    expect(await breaker()).toMatchObject({ consecutive_failures: 0, trips: 0, open_ms: null })
  })
})

describe('settle: batches', () => {
  it('counts completed and discarded members and enqueues the callbacks once the sealed batch is done', async () => {
    const callbacks = {
      onFinish: { name: 'batch-finished', queue: 'callbacks', priority: 1, maxAttempts: 2 },
      onSuccess: { name: 'batch-succeeded', queue: 'callbacks', priority: 1, maxAttempts: 2 },
      onDiscard: { name: 'batch-discarded', queue: 'callbacks', priority: 1, maxAttempts: 2 },
    }
    const batchId = await s.rows.batch({ total: 2, sealed: true, callbacks, properties: { order: 7 } })
    const a = await s.rows.leased(INV, { batchId })
    const b = await s.rows.leased(INV, { batchId, attempts: 5, maxAttempts: 5 })
    await settled({ completions: [done(a)] })
    const batch = () =>
      s.sql('SELECT completed, discarded, finished_at IS NOT NULL AS finished FROM $t.batches')
    expect(await batch()).toEqual([{ completed: 1, discarded: 0, finished: false }])
    expect(await s.sql(`SELECT 1 FROM $t.jobs WHERE queue = 'callbacks'`)).toEqual([])
    await settled({ failures: [fail(b)] })
    expect(await batch()).toEqual([{ completed: 1, discarded: 1, finished: true }])
    const fired = await s.sql(`SELECT name, payload FROM $t.jobs WHERE queue = 'callbacks' ORDER BY name`)
    expect(fired).toEqual([
      { name: 'batch-discarded', payload: { order: 7 } },
      { name: 'batch-finished', payload: { order: 7 } },
    ])
  })

  it('does not count a retry, and leaves an unsealed batch open', async () => {
    const { batchId, jobs } = await s.rows.inBatch(2)
    await s.sql('UPDATE $t.jobs SET lease_token = gen_random_uuid(), leased_by = $1, attempts = 1', [INV])
    const leased = await s.sql<{ id: string; token: string }>(
      'SELECT id::text, lease_token::text AS token FROM $t.jobs ORDER BY id',
    )
    const [first, second] = leased
    if (!first || !second) throw new Error('seeding failed')
    expect(jobs.map((j) => j.id)).toEqual([first.id, second.id])
    await settled({ completions: [done(first)], failures: [fail(second)] })
    expect(await s.sql('SELECT id::text, completed, discarded, finished_at FROM $t.batches')).toEqual([
      { id: batchId, completed: 1, discarded: 0, finished_at: null },
    ])
  })
})

describe('settle: a drain that finishes', () => {
  it('ends the invocation, frees its queue leases and counts the ready jobs', async () => {
    await s.rows.invocation({ id: INV, queues: ['q', 'serial'] })
    await s.rows.queueLease({ queue: 'serial', holder: INV })
    await s.rows.queueLease({ queue: 'other', holder: 'inv-b' })
    await s.rows.ready({ queue: 'q' })
    await s.rows.ready({ queue: 'serial' })
    await s.rows.ready({ queue: 'elsewhere' })
    await s.rows.scheduled({ queue: 'q' })
    await s.rows.exhausted({ queue: 'q' })
    const row = await settled({ finish: { invocationId: INV, queues: ['q', 'serial'] } })
    expect(row.ready).toBe(2)
    expect(await s.sql('SELECT id FROM $t.invocations')).toEqual([])
    expect(await s.sql('SELECT holder FROM $t.queue_leases')).toEqual([{ holder: 'inv-b' }])
  })

  it('with a sweep, hands back the jobs still leased to it that it does not name', async () => {
    const named = await s.rows.leased(INV)
    const orphan = await s.rows.leased(INV, { attempts: 2 })
    const foreign = await s.rows.leased('inv-b')
    const row = await settled({
      completions: [done(named)],
      finish: { invocationId: INV, queues: [], sweep: true },
    })
    expect(row).toMatchObject({ completed: 1, handed_back: 1, swept: 1 })
    expect(await jobRow(orphan.id)).toMatchObject({ attempts: 1, lease_token: null })
    expect(await jobRow(foreign.id)).toMatchObject({ lease_token: foreign.token })
  })
})

describe('settleAndClaim', () => {
  it('claims after the settle, so the next job of a released key runs in the same statement', async () => {
    const first = await s.rows.leased(INV, { exclusiveKey: 'k' })
    await s.rows.uniqueLock({ key: 'k', jobId: first.id, strategy: 'while-executing', owner: INV })
    const next = await s.rows.ready({ exclusiveKey: 'k' })
    const claimParams: ClaimParams = {
      queues: ['default'],
      limit: 5,
      leaseMs: 30_000,
      invocationId: INV,
      invocationPriority: 0,
      jobsDone: 1,
    }
    const rows = await s.run<SettleAndClaimRow>(
      settleAndClaim(s.t, { completions: [done(first)], failures: [], handBacks: [] }, claimParams),
    )
    expect(rows.map((r) => [r.completed, r.id])).toEqual([[1, next.id]])
    expect(await s.sql('SELECT job_id::text FROM $t.unique_locks')).toEqual([{ job_id: next.id }])
  })

  it('returns one row of counts with null job columns when nothing is left', async () => {
    const job = await s.rows.leased(INV)
    const rows = await s.run<SettleAndClaimRow>(
      settleAndClaim(
        s.t,
        { completions: [done(job)], failures: [], handBacks: [] },
        {
          queues: ['default'],
          limit: 5,
          leaseMs: 30_000,
          invocationId: INV,
          invocationPriority: 0,
          jobsDone: 1,
        },
      ),
    )
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ completed: 1, id: null })
  })
})
