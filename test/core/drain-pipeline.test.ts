import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { toDatabaseError } from '../../src/db/errors.js'
import { createSluice, type Db, defineJob, fromPg, type Sluice, type Statement } from '../../src/index.js'
import { databaseUrl, pgPool, uniqueSchema } from '../helpers/db.js'
import { mostAtOnce, type Span as Timed } from '../helpers/overlap.js'

/**
 * A drain whose handlers are quick next to a round trip keeps several settle-and-claim
 * statements in flight. The database is reached through a Db that holds every statement for a
 * fixed delay before sending it, as a network would; the test records when each statement was in
 * flight and how many overlapped.
 */

// Far enough that a second claim in flight pays even when a loaded machine slows the server's
// statements and the handlers' batches several times over.
const RTT_MS = 80

interface Span extends Timed {
  kind: string
}

function slowNetwork(db: Db, spans: Span[]): Db {
  return {
    ...db,
    async query(statement) {
      const from = performance.now()
      await new Promise((resolve) => setTimeout(resolve, RTT_MS))
      try {
        return await db.query(statement)
      } finally {
        const kind = /\.claim\(|relay_and_claim/.test(statement.text)
          ? /\.settle\(/.test(statement.text)
            ? 'settle+claim'
            : 'claim'
          : /\.settle\(/.test(statement.text)
            ? 'settle'
            : 'other'
        spans.push({ kind, from, to: performance.now() })
      }
    },
  }
}

const ran = new Map<number, number>()
const noop = defineJob({
  name: 'noop',
  input: z.object({ n: z.number() }),
  run: ({ n }) => {
    ran.set(n, (ran.get(n) ?? 0) + 1)
  },
})

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
  ran.clear()
})

async function setUp(
  pipeline?: number,
): Promise<{ sluice: Sluice; spans: Span[]; admin: ReturnType<typeof pgPool>; schema: string }> {
  const schema = uniqueSchema('pipe')
  const pool = pgPool(8)
  const admin = pgPool(2)
  const spans: Span[] = []
  const sluice = createSluice({
    database: slowNetwork(fromPg(pool), spans),
    schema,
    jobs: [noop],
    drain: { batchSize: 20, ...(pipeline === undefined ? {} : { pipeline }) },
  })
  await sluice.migrate()
  close = async () => {
    await sluice.close()
    await pool.end()
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await admin.end()
  }
  return { sluice, spans, admin, schema }
}

test('with the default pipeline, settle-and-claim statements overlap and every job runs once', async () => {
  const { sluice, spans, admin, schema } = await setUp()
  const n = 600
  await sluice.enqueueMany(
    noop,
    Array.from({ length: n }, (_, i) => ({ n: i })),
  )
  spans.length = 0
  const summary = await sluice.drain({ concurrency: 20 })
  expect(summary).toMatchObject({
    claimed: n,
    completed: n,
    handedBack: 0,
    lostLeases: 0,
    stoppedBy: 'empty',
  })
  expect(ran.size).toBe(n)
  expect([...ran.values()].every((times) => times === 1)).toBe(true)
  const { rows } = await admin.query(`SELECT count(*)::int AS left FROM "${schema}".jobs`)
  expect(rows[0].left).toBe(0)
  const drainSpans = spans.filter((s) => s.kind === 'settle+claim')
  expect(mostAtOnce(drainSpans)).toBeGreaterThanOrEqual(2)
  expect(mostAtOnce(drainSpans)).toBeLessThanOrEqual(3)
})

test('pipeline 1 keeps one statement in flight at a time', async () => {
  const { sluice, spans } = await setUp(1)
  await sluice.enqueueMany(
    noop,
    Array.from({ length: 200 }, (_, i) => ({ n: i })),
  )
  spans.length = 0
  const summary = await sluice.drain({ concurrency: 20 })
  expect(summary).toMatchObject({ claimed: 200, completed: 200, stoppedBy: 'empty' })
  expect(mostAtOnce(spans)).toBe(1)
})

test('a drain stopped while claims are in flight hands their jobs back unstarted, attempt uncounted', async () => {
  const { sluice, admin, schema } = await setUp()
  const n = 600
  await sluice.enqueueMany(
    noop,
    Array.from({ length: n }, (_, i) => ({ n: i })),
  )
  const stop = new AbortController()
  const summary = await sluice.drain({
    concurrency: 20,
    signal: stop.signal,
    onJob: () => {
      // Once several batches have run (the pipeline is full by then), stop.
      if (ran.size >= 200) stop.abort()
    },
  })
  expect(summary.stoppedBy).toBe('stopped')
  expect(summary.claimed).toBe(summary.completed + summary.handedBack)
  expect(summary.lostLeases).toBe(0)
  const { rows } = await admin.query<{ left: number; leased: number; attempted: number }>(
    `SELECT count(*)::int AS left, count(*) FILTER (WHERE lease_token IS NOT NULL)::int AS leased,
            count(*) FILTER (WHERE attempts > 0)::int AS attempted
     FROM "${schema}".jobs`,
  )
  expect(rows[0]).toEqual({ left: n - summary.completed, leased: 0, attempted: 0 })
  expect(ran.size).toBe(summary.completed)
  // The rest runs on the next drain, once each.
  const rest = await sluice.drain({ concurrency: 20 })
  expect(rest.completed).toBe(n - summary.completed)
  expect(ran.size).toBe(n)
  expect([...ran.values()].every((times) => times === 1)).toBe(true)
})

/** A job of queue `ledger`, which records the order its runs completed in. */
function ledgerJob(order: number[]) {
  return defineJob({
    name: 'ledger',
    queue: 'ledger',
    input: z.object({ n: z.number() }),
    retry: { maxAttempts: 3, baseDelayMs: 1, jitter: 0 },
    run: ({ n }, ctx) => {
      // Every third fails once (wherever claims cut the queue, some claim ends on one): nothing
      // after it may run before its retry.
      if (n % 3 === 2 && ctx.attempt === 1) throw new Error('transient')
      order.push(n)
    },
  })
}

/**
 * A drain over a slow network (passed through `network`) of a queue that another deployment made
 * single-consumer: this Sluice does not know, so only the claim's rows say so. Its network has
 * been timed by a drain of plain jobs, so the drains after it start with claims in flight
 * together (a drain that meets jobs to run in order keeps one from then on). Then plain jobs and
 * ledger jobs, in turns: each time the ledger's jobs come due, claims sent while plain batches ran
 * are in flight together.
 */
async function ledgerSetUp(
  order: number[],
  network: (db: Db) => Db,
): Promise<{ sluice: Sluice; spans: Span[]; admin: ReturnType<typeof pgPool>; schema: string }> {
  const schema = uniqueSchema('pipe')
  const ordered = ledgerJob(order)
  const owner = createSluice({
    database: databaseUrl,
    schema,
    jobs: [noop, ordered],
    queues: { ledger: { singleActiveConsumer: true } },
  })
  await owner.migrate()
  await owner.syncQueues()
  await owner.close()
  const pool = pgPool(8)
  const admin = pgPool(2)
  const spans: Span[] = []
  const sluice = createSluice({
    database: network(slowNetwork(fromPg(pool), spans)),
    schema,
    jobs: [noop, ordered],
    drain: { batchSize: 20 },
  })
  close = async () => {
    await sluice.close()
    await pool.end()
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await admin.end()
  }
  await sluice.enqueueMany(
    noop,
    Array.from({ length: 400 }, (_, i) => ({ n: 10_000 + i })),
  )
  while (ran.size < 400) await sluice.drain({ concurrency: 20 })
  spans.length = 0
  for (let round = 0; round < 5; round++) {
    await sluice.enqueueMany(
      noop,
      Array.from({ length: 120 }, (_, i) => ({ n: round * 120 + i })),
    )
    await sluice.enqueueMany(
      ordered,
      Array.from({ length: 20 }, (_, i) => ({ n: round * 20 + i })),
    )
  }
  return { sluice, spans, admin, schema }
}

test('a queue made single-consumer by another deployment keeps its order under a deeper pipeline', async () => {
  const order: number[] = []
  const { sluice, spans } = await ledgerSetUp(order, (db) => db)
  for (let i = 0; i < 200 && order.length < 100; i++) await sluice.drain({ concurrency: 20 })
  expect(order).toEqual(Array.from({ length: 100 }, (_, n) => n))
  expect(ran.size).toBe(1000)
  expect(mostAtOnce(spans.filter((s) => s.kind === 'settle+claim'))).toBeGreaterThanOrEqual(2)
})

test('a settle-and-claim whose reply is lost: the single-consumer jobs it took go back at their places, and order holds', {
  timeout: 120_000,
}, async () => {
  const order: number[] = []
  let taken = 0
  let lost = 0
  // Every other settle-and-claim that takes ledger jobs runs on the server and its reply is lost,
  // as with a cut connection: the drain knows neither its jobs nor which of the ledger's jobs it
  // took. They stay leased to it (its later claims skip the queue) until its end hands them back.
  const losing = (db: Db): Db => ({
    ...db,
    async query<R>(statement: Statement) {
      const result = await db.query<R>(statement)
      const claiming = /\.settle\(/.test(statement.text) && /\.claim\(|relay_and_claim/.test(statement.text)
      if (
        claiming &&
        result.rows.some((row) => (row as { queue?: unknown }).queue === 'ledger') &&
        taken++ % 2 === 0
      ) {
        lost++
        throw toDatabaseError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))
      }
      return result
    },
  })
  const { sluice, admin, schema } = await ledgerSetUp(order, losing)
  for (let i = 0; i < 200 && order.length < 100; i++) await sluice.drain({ concurrency: 20 })
  expect(lost).toBeGreaterThan(0)
  expect(order).toEqual(Array.from({ length: 100 }, (_, n) => n))
  expect(ran.size).toBe(1000)
  expect([...ran.values()].every((times) => times === 1)).toBe(true)
  const { rows } = await admin.query(`SELECT count(*)::int AS left FROM "${schema}".jobs`)
  expect(rows[0].left).toBe(0)
})
