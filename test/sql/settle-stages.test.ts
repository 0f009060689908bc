/**
 * The settle's stages (migrations/functions/settle_stages.sql), each called alone on seeded rows
 * with its own named parameters: what it writes, what it leaves, and what it returns for the
 * stages after it. test/sql/settle.test.ts covers them composed by settle().
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

const INV = 'drn_stages'
const WRONG = '00000000-0000-4000-8000-000000000000'

describe('settle_complete', () => {
  it('archives the jobs whose token matches, with the invocation and any failures before; returns what follows', async () => {
    const job = await s.rows.leased(INV, { name: 'mail', queue: 'q', uniqueKey: 'k1' })
    const retried = await s.rows.leased(INV, {
      name: 'mail',
      queue: 'q',
      attempts: 2,
      errors: [{ attempt: 1, message: 'first' }],
    })
    const stale = await s.rows.leased(INV, { name: 'mail', queue: 'q' })
    const [out] = await s.sql<{ n: number; released: unknown[]; outcomes: unknown[]; admission: unknown[] }>(
      `SELECT * FROM $t.settle_complete(
         p_id => $1::bigint[], p_token => $2::uuid[], p_status => $3::text[], p_duration_ms => $4::bigint[],
         p_wait_ms => $5::bigint[], p_lag_ms => $6::bigint[], p_result => $7::text[])`,
      [
        [job.id, retried.id, stale.id],
        [job.token, retried.token, WRONG],
        ['completed', 'completed', 'completed'],
        [25, 40, 1],
        [3, 4, 5],
        [null, null, null],
        ['{"sent":true}', null, '"stale"'],
      ],
    )
    expect(out).toMatchObject({ n: 2, admission: [] })
    // One success per queue: all the breakers read of completions.
    expect(out!.outcomes).toEqual([{ queue: 'q', succeeded: true }])
    // The unique key is released by after_end, from these records.
    expect(out!.released).toHaveLength(1)
    const archived = await s.sql<{ id: string; status: string; invocation: string; errors: unknown }>(
      'SELECT id::text, status, invocation, errors, result FROM $t.archive ORDER BY id',
    )
    expect(archived).toEqual([
      { id: job.id, status: 'completed', invocation: INV, errors: null, result: { sent: true } },
      {
        id: retried.id,
        status: 'completed',
        invocation: INV,
        errors: [{ attempt: 1, message: 'first' }],
        result: null,
      },
    ])
    // No job here had a parent: nothing for steps_children_ended.
    expect(out).toMatchObject({ children: [] })
    // The late ack changed nothing.
    expect(await s.sql('SELECT id::text FROM $t.jobs')).toEqual([{ id: stale.id }])
    expect(await s.sql('SELECT status, jobs FROM $t.job_stats')).toEqual([{ status: 'completed', jobs: 2 }])
  })
})

describe('settle_complete for a queue that keeps no archive', () => {
  it('deletes its ended jobs without an archive row, counts them, and still returns what follows', async () => {
    await s.rows.queue({ name: 'fast', archive: false })
    await s.rows.queue({ name: 'kept' })
    const fast = await s.rows.leased(INV, { name: 'ping', queue: 'fast', uniqueKey: 'u1' })
    const expired = await s.rows.leased(INV, { name: 'ping', queue: 'fast' })
    const child = await s.rows.leased(INV, { name: 'ping', queue: 'fast' })
    const kept = await s.rows.leased(INV, { name: 'ping', queue: 'kept' })
    // A queue without a row of its own (never synced) archives, as before.
    const unknown = await s.rows.leased(INV, { name: 'ping', queue: 'unsynced' })
    const parent = await s.rows.job({ name: 'flow', queue: 'kept', dueInMs: 60_000 })
    await s.sql('UPDATE $t.jobs SET parent_id = $1 WHERE id = $2', [parent.id, child.id])
    const ids = [fast, expired, child, kept, unknown]
    const [out] = await s.sql<{ n: number; released: unknown[]; outcomes: unknown[]; children: unknown[] }>(
      `SELECT * FROM $t.settle_complete($1::bigint[], $2::uuid[], $3::text[], $4::bigint[], $5::bigint[],
         $6::bigint[], $7::text[])`,
      [
        ids.map((j) => j.id),
        ids.map((j) => j.token),
        ['completed', 'expired', 'completed', 'completed', 'completed'],
        [10, 0, 12, 13, 14],
        [1, 2, 3, 4, 5],
        [null, null, null, null, null],
        [null, null, '{"pong":1}', null, null],
      ],
    )
    expect(out!.n).toBe(5)
    expect(out!.released).toHaveLength(1)
    expect(out!.outcomes).toHaveLength(3)
    // The child's end still reaches its parent's steps, result included.
    expect(out!.children).toEqual([
      {
        child_id: Number(child.id),
        parent_id: Number(parent.id),
        ok: true,
        result: { pong: 1 },
        error: null,
      },
    ])
    expect(await s.sql('SELECT id::text FROM $t.archive ORDER BY id')).toEqual([
      { id: kept.id },
      { id: unknown.id },
    ])
    expect(await s.sql('SELECT id::text FROM $t.jobs')).toEqual([{ id: parent.id }])
    expect(await s.sql('SELECT queue, status, jobs FROM $t.job_stats ORDER BY queue, status')).toEqual([
      { queue: 'fast', status: 'completed', jobs: 2 },
      { queue: 'fast', status: 'expired', jobs: 1 },
      { queue: 'kept', status: 'completed', jobs: 1 },
      { queue: 'unsynced', status: 'completed', jobs: 1 },
    ])
  })
})

describe("settle_complete's admission records", () => {
  it("are built only for jobs that carry their lag (adaptive policies'): nothing else reads them", async () => {
    const policyJob = () =>
      s.rows.leased(INV, { queue: 'q', name: 'send', policy: 'send', partitionKey: 'acme' })
    const [a, b] = [await policyJob(), await policyJob()]
    const [out] = await s.sql<{ admission: { lag_ms: number | null }[] }>(
      `SELECT admission FROM $t.settle_complete($1::bigint[], $2::uuid[], $3::text[], $4::bigint[], $5::bigint[],
         $6::bigint[], NULL::text[])`,
      [
        [a.id, b.id],
        [a.token, b.token],
        ['completed', 'completed'],
        [5, 5],
        [0, 0],
        [null, 40],
      ],
    )
    expect(out!.admission).toMatchObject([{ lag_ms: 40 }])
    expect(out!.admission).toHaveLength(1)
  })
})

describe('settle_fail', () => {
  const failArgs = (ids: string[], tokens: (string | null)[], finals: boolean[]) => [
    ids,
    tokens,
    ids.map(() => 'Error'),
    ids.map(() => 'boom'),
    ids.map(() => null),
    ids.map(() => 60_000),
    finals,
    ids.map(() => null),
    ids.map(() => 12),
    ids.map(() => 3),
    ids.map(() => null),
    ids.map(() => null),
  ]
  const call = `SELECT * FROM $t.settle_fail(
    p_id => $1::bigint[], p_token => $2::uuid[], p_error_name => $3::text[], p_error_message => $4::text[],
    p_error_code => $5::text[], p_delay_ms => $6::bigint[], p_final => $7::boolean[],
    p_keep_place => $8::timestamptz[], p_duration_ms => $9::bigint[], p_wait_ms => $10::bigint[],
    p_lag_ms => $11::bigint[], p_slow_down_ms => $12::bigint[])`

  it('retries a job with attempts left after its backoff, and buries one out of attempts or failed for good', async () => {
    const again = await s.rows.leased(INV, { queue: 'q', attempts: 1, maxAttempts: 3 })
    const spent = await s.rows.leased(INV, { queue: 'q', attempts: 3, maxAttempts: 3, uniqueKey: 'k-spent' })
    const final = await s.rows.leased(INV, { queue: 'q', attempts: 1, maxAttempts: 3 })
    const [out] = await s.sql<{ dead: number; retried: number; released: unknown[]; outcomes: unknown[] }>(
      call,
      failArgs([again.id, spent.id, final.id], [again.token, spent.token, final.token], [false, false, true]),
    )
    expect(out).toMatchObject({ dead: 2, retried: 1 })
    expect(out!.outcomes).toHaveLength(3)
    // Only ended jobs that hold something (a key, a slot, a batch) have a record for after_end.
    expect(out!.released).toHaveLength(1)
    const [retry] = await s.sql<{
      lease_token: string | null
      due_in_s: number
      errors: { invocation: string }[]
    }>(
      `SELECT lease_token, extract(epoch FROM run_at - now())::float8 AS due_in_s, errors FROM $t.jobs WHERE id = $1`,
      [again.id],
    )
    expect(retry!.lease_token).toBeNull()
    expect(retry!.due_in_s).toBeGreaterThan(55)
    expect(retry!.errors).toMatchObject([{ attempt: 1, message: 'boom', durationMs: 12, invocation: INV }])
    expect(await s.sql<{ id: string }>('SELECT id::text FROM $t.dead_letters ORDER BY id')).toEqual([
      { id: spent.id },
      { id: final.id },
    ])
  })

  it("gives a run the drain's deadline stopped (DRAIN_DEADLINE) no verdict for the breakers", async () => {
    const stopped = await s.rows.leased(INV, { queue: 'q', attempts: 1, maxAttempts: 3 })
    const spent = await s.rows.leased(INV, { queue: 'q', attempts: 3, maxAttempts: 3 })
    const failed = await s.rows.leased(INV, { queue: 'q', attempts: 1, maxAttempts: 3 })
    const args = failArgs(
      [stopped.id, spent.id, failed.id],
      [stopped.token, spent.token, failed.token],
      [false, false, false],
    )
    args[4] = ['DRAIN_DEADLINE', 'DRAIN_DEADLINE', null]
    const [out] = await s.sql<{ dead: number; retried: number; outcomes: { succeeded: boolean | null }[] }>(
      call,
      args,
    )
    // Both stopped runs still count as attempts (one retried, one buried); only the failure is one.
    expect(out).toMatchObject({ dead: 1, retried: 2 })
    expect(out!.outcomes.map((o) => o.succeeded).sort()).toEqual([false, null, null])
    // settle_breakers counts that one failure and nothing for the others.
    await s.rows.queue({ name: 'q', breakerThreshold: 2, consecutiveFailures: 0, breakerBaseMs: 1000 })
    await s.sql('SELECT $t.settle_breakers($1::jsonb)', [JSON.stringify(out!.outcomes)])
    expect(
      await s.sql(
        `SELECT consecutive_failures, breaker_until IS NULL AS closed FROM $t.queues WHERE name = 'q'`,
      ),
    ).toEqual([{ consecutive_failures: 1, closed: true }])
  })

  it('leaves a job whose token does not match', async () => {
    const job = await s.rows.leased(INV, { attempts: 3, maxAttempts: 3 })
    const [out] = await s.sql(call, failArgs([job.id], [WRONG], [true]))
    expect(out).toMatchObject({ dead: 0, retried: 0 })
    expect(await s.sql('SELECT count(*)::int AS n FROM $t.dead_letters')).toEqual([{ n: 0 }])
    expect(await s.sql('SELECT lease_token FROM $t.jobs')).toEqual([{ lease_token: job.token }])
  })
})

describe('settle_hand_back', () => {
  it('puts a claimed job back in its place with the attempt uncounted', async () => {
    const job = await s.rows.leased(INV, { attempts: 2, exclusiveKey: 'x' })
    await s.rows.uniqueLock({ key: 'x', jobId: job.id, strategy: 'while-executing', state: 'executing' })
    const due = new Date(Date.now() - 60_000)
    const [{ n }] = (await s.sql<{ n: number }>(
      'SELECT $t.settle_hand_back(p_id => $1::bigint[], p_token => $2::uuid[], p_due_at => $3::timestamptz[]) AS n',
      [[job.id], [job.token], [due.toISOString()]],
    )) as [{ n: number }]
    expect(n).toBe(1)
    const [row] = await s.sql<{ attempts: number; lease_token: string | null; run_at: Date }>(
      'SELECT attempts, lease_token, run_at FROM $t.jobs',
    )
    expect(row).toMatchObject({ attempts: 1, lease_token: null })
    expect(row!.run_at.getTime()).toBe(due.getTime())
    // Its while-executing lock goes with the attempt.
    expect(await s.sql('SELECT key FROM $t.unique_locks')).toEqual([])
  })
})

describe('settle_breakers', () => {
  it('opens a breaker at its threshold and closes it on a success; queues without one are not touched', async () => {
    await s.rows.queue({ name: 'fragile', breakerThreshold: 2, consecutiveFailures: 1, breakerBaseMs: 1000 })
    await s.rows.queue({ name: 'plain' })
    const outcomes = (queue: string, succeeded: boolean) => JSON.stringify([{ queue, succeeded }])
    await s.sql('SELECT $t.settle_breakers($1::jsonb)', [outcomes('fragile', false)])
    await s.sql('SELECT $t.settle_breakers($1::jsonb)', [outcomes('plain', false)])
    const state = () =>
      s.sql<{ name: string; open: boolean; trips: number; consecutive_failures: number }>(
        `SELECT name, coalesce(breaker_until > now(), false) AS open, trips, consecutive_failures
         FROM $t.queues ORDER BY name`,
      )
    expect(await state()).toEqual([
      { name: 'fragile', open: true, trips: 1, consecutive_failures: 0 },
      { name: 'plain', open: false, trips: 0, consecutive_failures: 0 },
    ])
    await s.sql('SELECT $t.settle_breakers($1::jsonb)', [outcomes('fragile', true)])
    expect((await state())[0]).toMatchObject({ trips: 0, consecutive_failures: 0 })
  })

  it('runs no update for successes while no breaker counts failures or trips, and one as soon as one does', async () => {
    await s.rows.queue({ name: 'a', breakerThreshold: 3 })
    await s.rows.queue({ name: 'b', breakerThreshold: 3 })
    const ran = async (queue: string, succeeded: boolean | null): Promise<boolean> => {
      const [row] = await s.sql<{ ran: boolean }>('SELECT $t.settle_breakers($1::jsonb) AS ran', [
        JSON.stringify([{ queue, succeeded }]),
      ])
      return row!.ran
    }
    expect(await ran('a', true)).toBe(false)
    // No verdict (the drain's deadline) counts as no failure.
    expect(await ran('a', null)).toBe(false)
    expect(await ran('b', false)).toBe(true)
    // b counts a failure: any success may have something to reset.
    expect(await ran('a', true)).toBe(true)
    expect(await ran('b', true)).toBe(true)
    expect(await ran('a', true)).toBe(false)
    // Trips left from an earlier opening count too.
    await s.sql(`UPDATE $t.queues SET trips = 2 WHERE name = 'b'`)
    expect(await ran('a', true)).toBe(true)
    expect(
      await s.sql(
        `SELECT name, consecutive_failures, trips FROM $t.queues WHERE name IN ('a', 'b') ORDER BY name`,
      ),
    ).toEqual([
      { name: 'a', consecutive_failures: 0, trips: 0 },
      { name: 'b', consecutive_failures: 0, trips: 2 },
    ])
  })
})

describe('settle_finish', () => {
  it('ends the invocation and its queue leases, and counts what is left due in its queues', async () => {
    await s.rows.invocation({ id: INV, queues: ['q'] })
    await s.rows.queueLease({ queue: 'q', holder: INV })
    await s.rows.ready({ queue: 'q' })
    await s.rows.ready({ queue: 'q' })
    await s.rows.ready({ queue: 'elsewhere' })
    const [{ ready }] = (await s.sql<{ ready: number }>(
      'SELECT $t.settle_finish(p_invocation => $1, p_queues => $2::text[]) AS ready',
      [INV, ['q']],
    )) as [{ ready: number }]
    expect(ready).toBe(2)
    expect(await s.sql('SELECT id FROM $t.invocations UNION ALL SELECT queue FROM $t.queue_leases')).toEqual(
      [],
    )
  })
})
