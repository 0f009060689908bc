import type { Socket } from 'node:net'
import pg from 'pg'
import { afterEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, type Db, defineJob, fromPg, type Statement } from '../../src/index.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
const closers: (() => Promise<void>)[] = []
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()))
  await env?.cleanup()
  env = undefined
})

/**
 * Holds a job's row in a transaction of its own, so that the statement settling the job
 * waits on it; `release()` rolls back.
 */
async function holdRow(e: TestSluice, id: string): Promise<{ release(): Promise<void> }> {
  const client = await e.admin.connect()
  await client.query('BEGIN')
  await client.query(`SELECT 1 FROM "${e.schema}".jobs WHERE id = $1 FOR UPDATE`, [id])
  return {
    async release() {
      await client.query('ROLLBACK')
      client.release()
    },
  }
}

/** Waits for a statement of the test's schema matching `like` to wait on a lock, then terminates its connection. */
async function dropWaiting(e: TestSluice, like: string): Promise<string> {
  let found: { pid: number; query: string } | undefined
  await expect
    .poll(
      async () => {
        ;[found] = await e.sql<{ pid: number; query: string }>(
          `SELECT pid, query FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`,
          [like.replaceAll('$schema', `"${e.schema}"`)],
        )
        return found
      },
      { timeout: 30_000, interval: 20 },
    )
    .toBeDefined()
  await e.sql('SELECT pg_terminate_backend($1)', [found!.pid])
  return found!.query
}

const settles = (e: TestSluice): string[] =>
  e.statements.events
    .filter((event) => event.text.includes('.settle('))
    .map(
      (event) =>
        `${event.text.includes('.claim(') ? 'settle+claim' : 'settle'} ${event.error ? 'failed' : 'ok'}`,
    )

describe('a settle whose connection drops', () => {
  test('is retried: the run that finished is not repeated', async () => {
    const runs: string[] = []
    let held: Promise<{ release(): Promise<void> }> | undefined
    const job = defineJob({
      name: 'settle-dropped',
      input: z.number(),
      run: (_n, ctx) => {
        runs.push(ctx.id)
        // The settle of this run will wait on its row until the test has dropped its connection.
        held = holdRow(env!, ctx.id)
        return held.then(() => {})
      },
    })
    env = await makeSluice({ jobs: [job] })
    await env.sluice.enqueue(job, 1)
    const drained = env.sluice.drain()
    await dropWaiting(env, '%$schema.settle(%')
    await (await held!).release()
    const summary = await drained
    expect(summary).toMatchObject({ claimed: 1, completed: 1, failed: 0, lostLeases: 0 })
    expect(runs).toHaveLength(1)
    expect(settles(env)).toEqual(['settle failed', 'settle ok'])
    expect(await env.sql(`SELECT status, attempts FROM $schema.archive`)).toEqual([
      { status: 'completed', attempts: 1 },
    ])
    expect(await env.sql(`SELECT 1 FROM $schema.jobs UNION ALL SELECT 1 FROM $schema.invocations`)).toEqual(
      [],
    )
  })

  test('with the next claim in the same statement: the settle is retried alone and the drain goes on', async () => {
    const runs: number[] = []
    let held: Promise<{ release(): Promise<void> }> | undefined
    const job = defineJob({
      name: 'settle-claim-dropped',
      input: z.number(),
      run: (n, ctx) => {
        runs.push(n)
        if (n !== 1) return
        held = holdRow(env!, ctx.id)
        return held.then(() => {})
      },
    })
    env = await makeSluice({ jobs: [job], drain: { concurrency: 1 } })
    // Seen to run once, so that the drain claims each next batch while one runs.
    await env.sluice.enqueue(job, 0)
    await env.sluice.drain()
    env.statements.reset()
    await env.sluice.enqueueMany(job, [1, 2, 3, 4])
    // Batches of one: job 1's completion goes with the claim of job 3, sent while job 2 runs.
    const drained = env.sluice.drain({ batchSize: 1 })
    const dropped = await dropWaiting(env, '%$schema.settle(%.claim(%')
    expect(dropped).toContain('.claim(')
    await (await held!).release()
    const summary = await drained
    expect(runs).toEqual([0, 1, 2, 3, 4])
    expect(summary).toMatchObject({ claimed: 4, completed: 4, lostLeases: 0, handedBack: 0 })
    // The claim of job 2 (with nothing to settle) went out while job 1 ran; then the one that failed.
    expect(settles(env).slice(0, 3)).toEqual(['settle+claim ok', 'settle+claim failed', 'settle ok'])
    const archived = await env.sql<{ attempts: number }>(`SELECT attempts FROM $schema.archive ORDER BY id`)
    expect(archived).toEqual([0, 1, 2, 3, 4].map(() => ({ attempts: 1 })))
    expect(await env.sql(`SELECT 1 FROM $schema.jobs UNION ALL SELECT 1 FROM $schema.invocations`)).toEqual(
      [],
    )
  })

  test('after it committed, the jobs its lost reply claimed go back when the drain ends', async () => {
    env = await makeSluice({ jobs: [] })
    // A drain on one connection whose replies the test can lose: the reply of the chosen statement
    // is left unread until the server has finished it, then the socket is destroyed.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 })
    pool.on('error', () => {})
    closers.push(() => pool.end())
    const sockets: Socket[] = []
    pool.on('connect', (client) => {
      sockets.push((client as unknown as { connection: { stream: Socket } }).connection.stream)
    })
    const base = fromPg(pool)
    /** When set, the reply of the first statement it matches is lost once `landed()` says the statement committed. */
    let lose: { when(statement: Statement): boolean; landed(): Promise<boolean> } | undefined
    const db: Db = {
      ...base,
      query: (async (statement: Statement) => {
        if (!lose?.when(statement)) return base.query(statement)
        const { landed } = lose
        lose = undefined
        const socket = sockets.at(-1)!
        socket.pause()
        const sent = base.query(statement)
        sent.catch(() => {})
        await expect.poll(landed, { timeout: 30_000, interval: 10 }).toBe(true)
        socket.destroy()
        return sent
      }) as Db['query'],
    }
    const runs: number[] = []
    const job = defineJob({
      name: 'reply-lost',
      input: z.number(),
      retry: 1,
      run: (n) => void runs.push(n),
    })
    const sluice = createSluice({ database: db, schema: env.schema, jobs: [job], drain: { concurrency: 1 } })
    closers.push(() => sluice.close())
    await sluice.enqueueMany(job, [1, 2, 3, 4, 5, 6])
    const [{ pid }] = (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [
      { pid: number },
    ]
    // The second settle-and-claim commits (the claim of job 3, sent while job 2 runs); its reply is lost.
    let seen = 0
    lose = {
      when: (statement) =>
        statement.text.includes('.settle(') && statement.text.includes('.claim(') && ++seen === 2,
      landed: async () => {
        const [row] = await env!.sql<{ landed: boolean }>(
          `SELECT (SELECT state = 'idle' FROM pg_stat_activity WHERE pid = $1)
              AND EXISTS (SELECT 1 FROM $schema.jobs WHERE payload::int = 3 AND lease_token IS NOT NULL)
              AND NOT EXISTS (SELECT 1 FROM $schema.jobs WHERE payload::int = 1) AS landed`,
          [pid],
        )
        return row!.landed
      },
    }
    const first = await sluice.drain({ batchSize: 1 })
    expect(lose).toBeUndefined()
    // Job 3 was claimed by the lost statement and never run here; it is back, its attempt uncounted.
    expect(runs).not.toContain(3)
    expect(first.claimed).toBeGreaterThan(0)
    expect(
      await env.sql(
        `SELECT payload::int AS n, attempts, lease_token FROM $schema.jobs WHERE payload::int = 3`,
      ),
    ).toEqual([{ n: 3, attempts: 0, lease_token: null }])
    // retry: 1 — had the lost claim's attempt counted, job 3 could never run again.
    while ((await sluice.drain({ batchSize: 1 })).claimed > 0);
    expect(runs.sort()).toEqual([1, 2, 3, 4, 5, 6])
    expect(await env.sql(`SELECT 1 FROM $schema.jobs UNION ALL SELECT 1 FROM $schema.dead_letters`)).toEqual(
      [],
    )
  })
})

test('a claim-ahead statement that fails at once fails the drain call, not the process', async () => {
  env = await makeSluice({ jobs: [] })
  const base = fromPg(env.admin)
  const refused = new Error('refused before it was sent')
  // Rejects the second settle-and-claim as soon as it is asked for. The first is sent after the
  // first batch (whose duration the drain did not know yet); the second is sent while the second
  // batch runs, and it fails inside the tick the drain yields to let it leave.
  let seen = 0
  const ahead: string[] = []
  const db: Db = {
    ...base,
    query: ((statement: Statement) => {
      if (statement.text.includes('.settle(') && statement.text.includes('.claim(') && ++seen === 2) {
        return Promise.reject(refused)
      }
      return base.query(statement)
    }) as Db['query'],
  }
  const job = defineJob({
    name: 'ahead-refused',
    input: z.number(),
    run: () => {
      // Whether the statement was already asked for while this job ran: it was claimed ahead.
      ahead.push(seen === 2 ? 'ahead' : 'alone')
    },
  })
  const sluice = createSluice({ database: db, schema: env.schema, jobs: [job], drain: { concurrency: 1 } })
  await sluice.enqueueMany(job, [1, 2, 3, 4])
  await expect(sluice.drain({ batchSize: 1 })).rejects.toBe(refused)
  expect(ahead).toEqual(['alone', 'ahead'])
})
