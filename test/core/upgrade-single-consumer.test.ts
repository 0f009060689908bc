import { afterAll, beforeAll, expect, test } from 'vitest'
import * as z from 'zod'
import { createSluice, defineJob, fromPg, type Sluice } from '../../src/index.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
import { migrate } from '../../src/migrate/run.js'
import { settle } from '../../src/sql/index.js'
import { pgPool, uniqueSchema } from '../helpers/db.js'
import { rowFactory } from '../helpers/rows.js'

// A database at migration 21, the schema before single-consumer jobs kept their place while
// leased, with two single-consumer queues in flight: one whose holder is still running its first
// job across the upgrade, and one whose holder died with its first job leased. Leases taken before
// the upgrade kept no place. After it, every job runs once, and each queue's jobs in order.

const BEFORE = 21
const admin = pgPool(2)
const pool = pgPool(4)
const schema = uniqueSchema('scup')
const t = `"${schema}"`
const order = new Map<string, number[]>()

const entry = defineJob({
  name: 'entry',
  input: z.object({ n: z.number() }),
  run: ({ n }, ctx) => {
    order.set(ctx.queue, [...(order.get(ctx.queue) ?? []), n])
  },
})

let sluice: Sluice
beforeAll(async () => {
  await migrate(
    fromPg(pool),
    schema,
    migrations.filter((m) => m.version <= BEFORE),
  )
  sluice = createSluice({
    database: fromPg(pool),
    schema,
    jobs: [entry],
    queues: { live: { singleActiveConsumer: true }, orphaned: { singleActiveConsumer: true } },
  })
})
afterAll(async () => {
  await sluice?.close()
  await pool.end()
  await admin.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
  await admin.end()
})

test('single-consumer jobs in flight at migration 21 upgrade, run once each, and keep their order', async () => {
  const rows = rowFactory(admin, t, { leaseInRunAt: true })
  // Each queue's jobs were enqueued two minutes ago; its first was claimed since.
  const seed = async (queue: string, holder: string, leaseMs: number) => {
    await rows.queue({ name: queue, singleConsumer: true })
    await rows.invocation({ id: holder, queues: [queue], expiresInMs: leaseMs })
    await rows.queueLease({ queue, holder, expiresInMs: leaseMs })
    const job = { queue, name: 'entry', enqueuedInMs: -120_000 }
    const first = await rows.leased(holder, { ...job, payload: { n: 0 }, expiresInMs: leaseMs })
    for (let n = 1; n <= 3; n++) await rows.ready({ ...job, payload: { n }, dueInMs: -120_000 })
    return first
  }
  const running = await seed('live', 'drn_old', 120_000)
  await seed('orphaned', 'drn_died', -60_000)

  const result = await sluice.migrate()
  expect(result.applied).toEqual(migrations.filter((m) => m.version > BEFORE).map((m) => m.version))

  // The live holder finishes its job with the new settle, and its drain ends.
  const finished = settle(t, {
    completions: [{ id: running.id, token: running.token!, status: 'completed', durationMs: 5, waitMs: 0 }],
    failures: [],
    handBacks: [],
    finish: { invocationId: 'drn_old', queues: ['live'], sweep: false },
  })
  expect((await admin.query(finished.text, finished.values as unknown[])).rows[0]).toMatchObject({
    completed: 1,
  })
  order.set('live', [0])

  for (let i = 0; i < 10; i++) {
    const [left] = (await admin.query(`SELECT count(*)::int AS n FROM ${t}.jobs`)).rows
    if (left!.n === 0) break
    await sluice.drain({ queues: ['live', 'orphaned'], concurrency: 1 })
  }
  expect(Object.fromEntries(order)).toEqual({ live: [0, 1, 2, 3], orphaned: [0, 1, 2, 3] })
  // The orphaned job's first attempt counts: it may have run.
  const [orphan] = (
    await admin.query(
      `SELECT attempts FROM ${t}.archive WHERE queue = 'orphaned' AND (payload->>'n')::int = 0`,
    )
  ).rows
  expect(orphan).toEqual({ attempts: 2 })
})
