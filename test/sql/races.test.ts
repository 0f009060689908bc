/**
 * Races made deterministic: connection A holds a lock in an open transaction, B runs its
 * statement, and the test waits until PostgreSQL says B is waiting on a lock (pg_locks) before
 * letting A go, instead of sleeping and hoping.
 */
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  type ClaimedRow,
  type ClaimParams,
  type ClaimRow,
  type ControlledRow,
  claim,
  enqueueControlled,
  type NewJob,
  type SettleRow,
  settle,
} from '../../src/sql/index.js'
import { databaseUrl } from '../helpers/db.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
const clients: pg.Client[] = []

beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})))
  await s.cleanup(context)
})

/** A connection of its own, with its backend pid. */
async function connection(): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: databaseUrl })
  client.on('error', () => {})
  await client.connect()
  clients.push(client)
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
  return { client, pid: Number(rows[0]?.pid) }
}

/**
 * Resolves once backend `pid` waits for a lock: a row of pg_locks not granted. Fails if `work`
 * settles first (B did not wait) or after `timeoutMs`.
 */
async function waitsOnLock(pid: number, work: Promise<unknown>, timeoutMs = 20_000): Promise<void> {
  let settled = false
  work.then(
    () => {
      settled = true
    },
    () => {
      settled = true
    },
  )
  const end = Date.now() + timeoutMs
  for (;;) {
    const { rows } = await s.pool.query('SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted', [pid])
    if (rows.length > 0) return
    if (settled) throw new Error(`backend ${pid} finished without waiting on a lock`)
    if (Date.now() > end) throw new Error(`backend ${pid} never waited on a lock`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const params = (invocationId: string, p: Partial<ClaimParams> = {}): ClaimParams => ({
  queues: ['default'],
  limit: 10,
  leaseMs: 30_000,
  invocationId,
  invocationPriority: 0,
  jobsDone: 0,
  ...p,
})

const jobsOf = (rows: readonly ClaimRow[]): ClaimedRow[] => rows.filter((r): r is ClaimedRow => r.id !== null)
const idsOf = (rows: readonly ClaimRow[]): string[] =>
  jobsOf(rows)
    .map((r) => r.id)
    .sort((a, b) => Number(a) - Number(b))

describe('claims race', () => {
  it('a claim skips a row another transaction holds FOR UPDATE, and gets it once that commits', async () => {
    const locked = await s.rows.ready({ dueInMs: -2 })
    const free = await s.rows.ready({ dueInMs: -1 })
    const a = await connection()
    await a.client.query('BEGIN')
    await a.client.query(`SELECT 1 FROM ${s.t}.jobs WHERE id = $1 FOR UPDATE`, [locked.id])
    const b = await connection()
    // SKIP LOCKED: B does not wait, it takes the other row.
    expect(idsOf(await s.run<ClaimRow>(claim(s.t, params('inv-b')), b.client))).toEqual([free.id])
    await a.client.query('COMMIT')
    expect(idsOf(await s.run<ClaimRow>(claim(s.t, params('inv-b')), b.client))).toEqual([locked.id])
  })

  it('two claims in flight never take the same job', async () => {
    const jobs = [await s.rows.ready(), await s.rows.ready(), await s.rows.ready()]
    const a = await connection()
    const b = await connection()
    await a.client.query('BEGIN')
    const first = await s.run<ClaimRow>(claim(s.t, params('inv-a', { limit: 2 })), a.client)
    // A's claim is not committed: its rows stay locked, B takes what is left.
    const second = await s.run<ClaimRow>(claim(s.t, params('inv-b')), b.client)
    await a.client.query('COMMIT')
    expect(idsOf([...first, ...second])).toEqual(jobs.map((j) => j.id))
    expect(idsOf(second)).toHaveLength(1)
  })

  it('a second claim of a while-executing key waits for the first, then does not take it', async () => {
    const first = await s.rows.ready({ exclusiveKey: 'k', dueInMs: -2 })
    const second = await s.rows.ready({ exclusiveKey: 'k', dueInMs: -1 })
    const plain = await s.rows.ready()
    const a = await connection()
    const b = await connection()
    await a.client.query('BEGIN')
    expect(idsOf(await s.run<ClaimRow>(claim(s.t, params('inv-a', { limit: 1 })), a.client))).toEqual([
      first.id,
    ])
    // B skips A's locked row; the next job of the key is a candidate (A's lock row is not
    // visible yet), and B's insert of the key's lock waits for A's.
    const racing = s.run<ClaimRow>(claim(s.t, params('inv-b')), b.client)
    await waitsOnLock(b.pid, racing)
    await a.client.query('COMMIT')
    const got = await racing
    expect(idsOf(got)).toEqual([plain.id])
    const [left] = await s.sql('SELECT attempts, lease_token FROM $t.jobs WHERE id = $1', [second.id])
    expect(left).toEqual({ attempts: 0, lease_token: null })
    expect(await s.sql('SELECT job_id::text, owner FROM $t.unique_locks')).toEqual([
      { job_id: first.id, owner: 'inv-a' },
    ])
  })

  it('when the first claim of a key rolls back, the waiting claim takes the key', async () => {
    await s.rows.ready({ exclusiveKey: 'k', dueInMs: -2 })
    const second = await s.rows.ready({ exclusiveKey: 'k', dueInMs: -1 })
    const a = await connection()
    const b = await connection()
    await a.client.query('BEGIN')
    await s.run<ClaimRow>(claim(s.t, params('inv-a', { limit: 1 })), a.client)
    const racing = s.run<ClaimRow>(claim(s.t, params('inv-b')), b.client)
    await waitsOnLock(b.pid, racing)
    await a.client.query('ROLLBACK')
    expect(idsOf(await racing)).toEqual([second.id])
  })
})

describe('enqueues race on a unique key', () => {
  const job = (onConflict: 'reject' | 'discard'): NewJob => ({
    queue: 'default',
    name: 'work',
    payload: '{}',
    priority: 16384,
    maxAttempts: 5,
    runAt: null,
    delayMs: 0,
    unique: { key: 'order:1', strategy: 'until-executed', onConflict, ttlMs: 60_000 },
  })

  async function firstHolds(): Promise<{ a: pg.Client; b: { client: pg.Client; pid: number }; id: string }> {
    const a = await connection()
    const b = await connection()
    await a.client.query('BEGIN')
    const [row] = await s.run<ControlledRow>(enqueueControlled(s.t, [job('reject')]), a.client)
    expect(row?.status).toBe('enqueued')
    return { a: a.client, b, id: String(row?.id) }
  }

  it('the second waits for the first, then is rejected', async () => {
    const { a, b } = await firstHolds()
    const racing = s.run<ControlledRow>(enqueueControlled(s.t, [job('reject')]), b.client)
    await waitsOnLock(b.pid, racing)
    await a.query('COMMIT')
    const error = await racing.then(
      () => null,
      (e: unknown) => e,
    )
    // The SQLSTATE enqueue_controlled raises for a conflict that rejects.
    expect((error as { code?: string } | null)?.code).toBe('SLU09')
    expect(await s.sql('SELECT count(*)::int AS n FROM $t.jobs')).toEqual([{ n: 1 }])
  })

  it('the second waits for the first, then reports the duplicate', async () => {
    const { a, b, id } = await firstHolds()
    const racing = s.run<ControlledRow>(enqueueControlled(s.t, [job('discard')]), b.client)
    await waitsOnLock(b.pid, racing)
    await a.query('COMMIT')
    expect(await racing).toEqual([{ ord: '1', id: null, status: 'duplicate', existing_id: id }])
  })

  it('the second takes the key when the first rolls back', async () => {
    const { a, b } = await firstHolds()
    const racing = s.run<ControlledRow>(enqueueControlled(s.t, [job('reject')]), b.client)
    await waitsOnLock(b.pid, racing)
    await a.query('ROLLBACK')
    const [row] = await racing
    expect(row?.status).toBe('enqueued')
    expect(await s.sql('SELECT job_id::text AS id FROM $t.unique_locks')).toEqual([{ id: row?.id }])
  })
})

describe('a late settle races a re-claim', () => {
  it('a settle with the old token waits for the re-claim, then matches nothing', async () => {
    const lost = await s.rows.leased('inv-dead', { expiresInMs: -1_000 })
    const a = await connection()
    const b = await connection()
    await a.client.query('BEGIN')
    const [reclaimed] = jobsOf(await s.run<ClaimRow>(claim(s.t, params('inv-a')), a.client))
    expect(reclaimed?.id).toBe(lost.id)
    const late = s.run<SettleRow>(
      settle(s.t, {
        completions: [
          { id: lost.id, token: String(lost.token), status: 'completed', durationMs: 1, waitMs: 0 },
        ],
        failures: [],
        handBacks: [],
      }),
      b.client,
    )
    await waitsOnLock(b.pid, late)
    await a.client.query('COMMIT')
    const [row] = await late
    expect(row?.completed).toBe(0)
    const [job] = await s.sql('SELECT lease_token::text AS token, attempts FROM $t.jobs WHERE id = $1', [
      lost.id,
    ])
    expect(job).toEqual({ token: reclaimed?.token, attempts: 2 })
    expect(await s.sql('SELECT * FROM $t.archive')).toEqual([])
  })

  it('a claim skips a job whose settle is in flight, and the settle archives it', async () => {
    const job = await s.rows.leased('inv-a', { expiresInMs: -1_000 })
    const a = await connection()
    const b = await connection()
    await a.client.query('BEGIN')
    const [done] = await s.run<SettleRow>(
      settle(s.t, {
        completions: [
          { id: job.id, token: String(job.token), status: 'completed', durationMs: 1, waitMs: 0 },
        ],
        failures: [],
        handBacks: [],
      }),
      a.client,
    )
    expect(done?.completed).toBe(1)
    expect(jobsOf(await s.run<ClaimRow>(claim(s.t, params('inv-b')), b.client))).toEqual([])
    await a.client.query('COMMIT')
    expect(await s.sql('SELECT id::text FROM $t.archive')).toEqual([{ id: job.id }])
    expect(jobsOf(await s.run<ClaimRow>(claim(s.t, params('inv-b')), b.client))).toEqual([])
  })
})

describe('a single-consumer queue changes hands', () => {
  it("a claim that waited for the holder's last settle to free the lease takes nothing past the jobs it handed back", async () => {
    await s.rows.queue({ name: 'serial', singleConsumer: true })
    const jobs = []
    for (let i = 0; i < 4; i++) jobs.push(await s.rows.ready({ queue: 'serial', dueInMs: i - 10 }))
    const a = await connection()
    const b = await connection()
    const first = await s.run<ClaimRow>(
      claim(s.t, params('inv-a', { queues: ['serial'], limit: 2 })),
      a.client,
    )
    expect(idsOf(first)).toEqual([jobs[0]!.id, jobs[1]!.id])
    // A's last settle hands both back and frees the queue lease, in one transaction left open.
    await a.client.query('BEGIN')
    await s.run<SettleRow>(
      settle(s.t, {
        completions: [],
        failures: [],
        handBacks: jobsOf(first).map((r) => ({ id: r.id, token: r.token, dueAt: r.due_at })),
        finish: { invocationId: 'inv-a', queues: ['serial'] },
      }),
      a.client,
    )
    // B's claim waits for the lease A is freeing; its snapshot predates A's commit.
    const taking = s.run<ClaimRow>(claim(s.t, params('inv-b', { queues: ['serial'], limit: 2 })), b.client)
    await waitsOnLock(b.pid, taking)
    await a.client.query('COMMIT')
    const taken = idsOf(await taking)
    expect(taken).not.toContain(jobs[2]!.id)
    expect(taken).not.toContain(jobs[3]!.id)
    // The next claim sees the handed-back jobs, and takes them first.
    const next = await s.run<ClaimRow>(
      claim(s.t, params('inv-b', { queues: ['serial'], limit: 2 })),
      b.client,
    )
    expect([...taken, ...idsOf(next)]).toEqual([jobs[0]!.id, jobs[1]!.id])
  })
})
