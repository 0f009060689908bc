/**
 * inspect.overview(): the dashboard's front page in one statement. Small tables are counted
 * exactly; the sampled path (forced here with a page limit of 0, sampling every block of a
 * small table) must agree with the exact one and say it is an estimate.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import * as z from 'zod'
import { defineJob } from '../../src/index.js'
import { OVERVIEW_LIMITS, type Overview, type OverviewLimits, overview } from '../../src/sql/overview.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { type RowFactory, rowFactory } from '../helpers/rows.js'

const input = z.object({}).default({})
const ok = defineJob({ name: 'ok', queue: 'mail', input, run: async () => {} })
const flaky = defineJob({
  name: 'flaky',
  queue: 'mail',
  input,
  retry: { maxAttempts: 1, baseDelayMs: 0, jitter: 0 },
  run: async () => {
    throw new Error('boom')
  },
})
const later = defineJob({
  name: 'later',
  queue: 'reports',
  input,
  retry: { maxAttempts: 3, baseDelayMs: 3_600_000, jitter: 0 },
  run: async () => {
    throw new Error('not yet')
  },
})
const limited = defineJob({
  name: 'limited',
  queue: 'reports',
  input,
  concurrency: { limit: 1, key: () => 'k' },
  run: async () => {},
})

let t: TestSluice
let rows: RowFactory
beforeAll(async () => {
  t = await makeSluice({ jobs: [ok, flaky, later, limited] })
  rows = rowFactory(t.admin, `"${t.schema}"`)
  // Finished in this minute: 2 completed, 1 dead (mail), 1 failed for a retry (reports).
  await t.sluice.enqueue(ok, {})
  await t.sluice.enqueue(ok, {})
  await t.sluice.enqueue(flaky, {})
  await t.sluice.enqueue(later, {})
  await t.sluice.drain({ queues: ['mail', 'reports'] })
  // Left waiting: 3 ready (one due a minute ago), 1 scheduled in mail; 1 blocked in reports.
  await t.sluice.enqueue(ok, {})
  await t.sluice.enqueue(ok, {})
  await rows.job({ queue: 'mail', name: 'ok', dueInMs: -60_000 })
  await t.sluice.enqueue(ok, {}, { delay: 3_600_000 })
  await rows.leased('inv-1', { queue: 'reports', name: 'limited' })
  await t.sluice.enqueue(limited, {})
  await t.sluice.enqueue(limited, {})
  await rows.invocation({ id: 'inv-1', queues: ['reports'], jobsDone: 4 })
  await rows.invocation({ id: 'inv-dead', queues: ['mail'], expiresInMs: -1_000 })
})
afterAll(() => t.cleanup())

/** The statement with other limits, as inspect.overview() would send it on a large table. */
async function withLimits(limits: OverviewLimits): Promise<Overview> {
  await t.sql('ANALYZE $schema.dead_letters')
  const statement = overview(`"${t.schema}"`, t.schema, ['mail', 'reports'], limits)
  return (await t.admin.query<Overview>(statement.text, [...statement.values])).rows[0]!
}

function expectFigures(o: Overview, estimated: boolean): void {
  const byQueue = Object.fromEntries(o.queues.map((q) => [q.queue, q]))
  expect(byQueue.mail).toMatchObject({
    ready: 3,
    scheduled: 1,
    retrying: 0,
    running: 0,
    blocked: 0,
    estimated,
  })
  expect(byQueue.mail!.oldestReadyAgeSeconds).toBeGreaterThanOrEqual(59)
  // reports: the failed job waits an hour for its retry; one limited job runs (its slot
  // taken at enqueue, seeded leased here), the second enqueued is blocked behind the first.
  expect(byQueue.reports).toMatchObject({ retrying: 1, running: 1, blocked: 1, estimated })
  expect(o.lastHour).toEqual({ completed: 2, failed: 1, dead: 1, expired: 0 })
  expect(o.throughput).toHaveLength(60)
  const total = o.throughput.reduce((a, m) => ({ c: a.c + m.completed, f: a.f + m.failed }), { c: 0, f: 0 })
  expect(total).toEqual({ c: 2, f: 2 })
  expect(o.deadLetters).toEqual({ count: 1, estimated })
  expect(o.drains.map((d) => [d.id, d.jobsDone])).toEqual([['inv-1', 4]])
}

test('exact on small tables, in one statement', async () => {
  t.statements.reset()
  const o = await t.sluice.inspect.overview()
  expect(t.statements.count).toBe(1)
  expectFigures(o, false)
})

test('on a large table, small states are counted exactly from indexes', async () => {
  const o = await withLimits({ exactPages: 0, exactRows: 2_000, samplePages: 200 })
  // The dead letters are then the planner's estimate; the queues' states all exact.
  expect(o.deadLetters.estimated).toBe(true)
  for (const q of o.queues) expect(q.margin).toEqual({ ready: 0, scheduled: 0, retrying: 0 })
  expectFigures({ ...o, queues: o.queues.map((q) => ({ ...q, estimated: true })) }, true)
  expect(o.queues.every((q) => !q.estimated)).toBe(true)
})

test('the sampled path agrees when it samples every block, and says it estimates', async () => {
  // No state below the exact cap: every non-empty one is scaled up from the sample, which here
  // holds every block (probability 1, so no variance: margin 0).
  expectFigures(await withLimits({ exactPages: 0, exactRows: 0, samplePages: 200 }), true)
})

test('jobs whose lease ran out are ready, plain or admitted, on the exact and the large paths', async () => {
  // Leased jobs are in the claim indexes (jobs_ready, jobs_admit) at their places, all due: the
  // large path takes the running ones, counted on their lease rows, off the due count. A job whose
  // lease ran out is ready from its place (due a minute ago here).
  await rows.leased('inv-gone', { queue: 'lapsed', name: 'ok', dueInMs: -60_000, expiresInMs: -1 })
  await rows.leased('inv-1', { queue: 'lapsed', name: 'ok' })
  await rows.job({ queue: 'lapsed', name: 'ok' })
  await rows.partition({ policy: 'gov', partitionKey: 'k', queue: 'governed' })
  const admitted = { queue: 'governed', name: 'gov', policy: 'gov', partitionKey: 'k' }
  await rows.leased('inv-gone', { ...admitted, dueInMs: -60_000, expiresInMs: -1 })
  await rows.leased('inv-1', admitted)
  await rows.job(admitted)
  const exact = await withLimits({ exactPages: 1_000_000, exactRows: 2_000, samplePages: 200 })
  const large = await withLimits({ exactPages: 0, exactRows: 2_000, samplePages: 200 })
  for (const o of [exact, large]) {
    const byQueue = Object.fromEntries(o.queues.map((q) => [q.queue, q]))
    for (const queue of ['lapsed', 'governed'])
      expect(byQueue[queue], queue).toMatchObject({ ready: 2, running: 1, scheduled: 0, retrying: 0 })
    expect(byQueue.lapsed!.oldestReadyAgeSeconds).toBeGreaterThanOrEqual(59)
    expect(byQueue.governed!.oldestReadyAgeSeconds).toBeGreaterThanOrEqual(59)
  }
  expect(large.queues.find((q) => q.queue === 'lapsed')!.estimated).toBe(false)
})

test("the jobs list's states name the jobs the overview counts", async () => {
  // A failed job whose retry is due is ready in the overview: the list calls it waiting, not
  // retrying; so is a job whose lease ran out (its drain died), due again at once.
  await rows.job({ queue: 'states', name: 'ok' })
  await rows.job({ queue: 'states', name: 'ok', attempts: 1, dueInMs: -1_000, lastError: { message: 'x' } })
  await rows.leased('inv-gone', { queue: 'states', name: 'ok', expiresInMs: -60_000 })
  await rows.job({
    queue: 'states',
    name: 'ok',
    attempts: 1,
    dueInMs: 3_600_000,
    lastError: { message: 'x' },
  })
  await rows.job({ queue: 'states', name: 'ok', dueInMs: 3_600_000 })
  await rows.leased('inv-1', { queue: 'states', name: 'ok' })
  const o = await t.sluice.inspect.overview()
  const counted = o.queues.find((q) => q.queue === 'states')!
  expect(counted).toMatchObject({ ready: 3, scheduled: 1, retrying: 1, running: 1 })
  const listed = async (state: 'waiting' | 'scheduled' | 'retrying' | 'running') =>
    (await t.sluice.inspect.jobs({ queue: 'states', state })).length
  expect({
    ready: await listed('waiting'),
    scheduled: await listed('scheduled'),
    retrying: await listed('retrying'),
    running: await listed('running'),
  }).toEqual({ ready: 3, scheduled: 1, retrying: 1, running: 1 })
})

test('runs without JIT compilation, whatever the planner estimates', async (ctx) => {
  // Every plan JIT-compiled (costs 0), and each statement's plan, nested ones too, logged to
  // this connection: the overview's statement, inside its function, must show no JIT section.
  const client = await t.admin.connect()
  const notices: string[] = []
  try {
    const [{ available }] = (
      await client.query<{ available: boolean }>('SELECT pg_jit_available() AS available')
    ).rows as [{ available: boolean }]
    const loaded = await client.query("LOAD 'auto_explain'").then(
      () => true,
      () => false,
    )
    if (!available || !loaded) ctx.skip()
    await client.query(
      `SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on;
       SET auto_explain.log_analyze = on; SET jit_above_cost = 0; SET jit_inline_above_cost = 0;
       SET jit_optimize_above_cost = 0; SET client_min_messages = log`,
    )
    client.on('notice', (notice) => notices.push(notice.message ?? ''))
    // The control: under these settings a plain statement is compiled.
    await client.query(`SELECT count(*) FROM "${t.schema}".jobs`)
    expect(notices.some((n) => n.includes('JIT:'))).toBe(true)
    notices.length = 0
    const statement = overview(`"${t.schema}"`, t.schema, ['mail'], OVERVIEW_LIMITS)
    await client.query(statement.text, [...statement.values])
    // The function's own statement (the call around it costs next to nothing at real settings).
    const body = notices.filter((n) => n.includes('WITH RECURSIVE rel'))
    expect(body).toHaveLength(1)
    expect(body[0]).not.toContain('JIT:')
  } finally {
    await client.query('RESET ALL')
    client.release()
  }
})
