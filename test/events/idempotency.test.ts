import { spawnSync } from 'node:child_process'
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, defineSubscriber, PermanentJobError, type SubscriberContext } from '../../src/index.js'
import { databaseUrl, endLeasesSql, makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

/** The ledger subscriber as the crashing fixture defines it, without the crash, counting its runs. */
function ledger(schema: string, runs: { n: number }, during?: (ctx: SubscriberContext) => Promise<void>) {
  return defineSubscriber({
    name: 'ledger',
    topic: 'payments.captured',
    input: z.object({ amount: z.number() }),
    timeout: 5_000,
    run: async (payload, ctx) => {
      runs.n++
      await ctx.transaction(async (tx) => {
        await tx.query({
          text: `INSERT INTO "${schema}".side_effects (event_id, amount) VALUES ($1, $2)`,
          values: [ctx.event.id, payload.amount],
        })
        await during?.(ctx)
      })
    },
  })
}

async function withSideEffects(schema: string): Promise<TestSluice> {
  const made = await makeSluice({ schema, subscribers: [ledger(schema, { n: 0 })] })
  await made.sql(`CREATE TABLE $schema.side_effects (event_id text NOT NULL, amount integer NOT NULL)`)
  return made
}

test('published twice and re-delivered after the drain died past its commit: the side effect happens once', async () => {
  const schema = `idem_${process.pid}_${Date.now().toString(36)}`
  env = await withSideEffects(schema)
  expect(await env.sluice.publish('payments.captured', { amount: 5 }, { eventId: 'pay-1' })).toMatchObject({
    jobs: 1,
  })
  expect(await env.sluice.publish('payments.captured', { amount: 5 }, { eventId: 'pay-1' })).toMatchObject({
    jobs: 0,
  })

  const child = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/crashing-subscriber.ts'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, SLUICE_SCHEMA: schema },
    encoding: 'utf8',
    timeout: 30_000,
  })
  expect(child.status ?? (child.signal === 'SIGKILL' ? 137 : null)).toBe(137)
  // The side effect and the mark committed; the job was never settled and is still leased.
  expect(await env.sql(`SELECT event_id, amount FROM $schema.side_effects`)).toEqual([
    { event_id: 'pay-1', amount: 5 },
  ])
  expect(await env.sql(`SELECT attempts, lease_token IS NOT NULL AS leased FROM $schema.jobs`)).toEqual([
    { attempts: 1, leased: true },
  ])

  // The lease runs out (moved by the test): the job is re-delivered to a healthy drain.
  await env.sql(endLeasesSql('$schema'))
  const runs = { n: 0 }
  const healthy = createSluice({ database: databaseUrl, schema, subscribers: [ledger(schema, runs)] })
  expect(await healthy.drain()).toMatchObject({ claimed: 1, completed: 1, failed: 0 })
  await healthy.close()
  expect(runs.n).toBe(0)
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.side_effects`)).toEqual([{ n: 1 }])
  expect(await env.sql(`SELECT attempts, status FROM $schema.archive`)).toEqual([
    { attempts: 2, status: 'completed' },
  ])
})

test('a re-delivery that runs while the first run is still inside its transaction waits, then skips', async () => {
  const schema = `idem_${process.pid}_${Date.now().toString(36)}_c`
  let entered!: () => void
  const inside = new Promise<void>((resolve) => {
    entered = resolve
  })
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  const runs = { n: 0 }
  const slow = ledger(schema, runs, async (ctx) => {
    if (ctx.attempt !== 1) return
    entered()
    await gate
  })
  env = await makeSluice({ schema, subscribers: [slow] })
  await env.sql(`CREATE TABLE $schema.side_effects (event_id text NOT NULL, amount integer NOT NULL)`)
  await env.sluice.publish('payments.captured', { amount: 7 }, { eventId: 'pay-2' })

  const first = env.sluice.drain()
  await inside
  // The first run's lease runs out while its transaction is still open: a second drain takes the job.
  await env.sql(endLeasesSql('$schema'))
  const other = createSluice({ database: databaseUrl, schema, subscribers: [slow] })
  const second = other.drain()
  // Wait until the second run's mark insert is blocked on the first run's uncommitted mark.
  for (let i = 0; ; i++) {
    const [row] = await env.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%processed_events%'`,
    )
    if (row!.n > 0) break
    if (i > 200) throw new Error('the second run never waited on the first one')
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  release()
  const [a, b] = await Promise.all([first, second])
  await other.close()
  expect(runs.n).toBe(2)
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.side_effects`)).toEqual([{ n: 1 }])
  // The first drain's settle lost its lease; the second one completed the job without the effect.
  expect(a).toMatchObject({ completed: 0, lostLeases: 1 })
  expect(b).toMatchObject({ claimed: 1, completed: 1, failed: 0 })
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 0 }])
})

test('the settle statement marks completed runs: a second job of a processed event skips its handler', async () => {
  let runs = 0
  const plain = defineSubscriber({
    name: 'plain',
    topic: 'user.signed-up',
    run: () => {
      runs++
    },
  })
  env = await makeSluice({ subscribers: [plain] })
  await env.sluice.publish('user.signed-up', { id: 1 }, { eventId: 'signup-1' })
  env.statements.reset()
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  // Claim and settle: the processed check and the mark ride along.
  expect(env.statements.count).toBe(2)
  expect(runs).toBe(1)
  expect(await env.sql(`SELECT event_id, subscriber FROM $schema.processed_events`)).toEqual([
    { event_id: 'signup-1', subscriber: 'plain' },
  ])
  // The delivery record ages out before the mark does: the same event id is published again.
  await env.sql(`UPDATE $schema.event_deliveries SET delivered_at = now() - interval '8 days'`)
  await env.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
  const report = await env.sluice.maintain()
  expect(report.tasks.find((t) => t.task === 'prune-processed-events')).toMatchObject({ ran: true, rows: 1 })
  expect(await env.sluice.publish('user.signed-up', { id: 1 }, { eventId: 'signup-1' })).toMatchObject({
    jobs: 1,
  })
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(runs).toBe(1)
  // Past the retention, the marks go too.
  await env.sql(`UPDATE $schema.processed_events SET processed_at = now() - interval '8 days'`)
  await env.sql(`UPDATE $schema.maintenance SET next_run_at = now() - interval '1 ms'`)
  await env.sluice.maintain()
  expect(await env.sql(`SELECT 1 FROM $schema.processed_events`)).toEqual([])
})

test('failed events retry, dead-letter with their event metadata, and replay', async () => {
  let fail = true
  const flaky = defineSubscriber({
    name: 'flaky',
    topic: 'orders.*',
    retry: { maxAttempts: 2, baseDelayMs: 0, jitter: 0 },
    run: () => {
      if (fail) throw new Error('downstream is down')
    },
  })
  const steady = defineSubscriber({ name: 'steady', topic: 'orders.#', run: () => {} })
  env = await makeSluice({ subscribers: [flaky, steady] })
  await env.sluice.publish('orders.created', { id: 'o1' }, { eventId: 'o1-created' })
  await env.sluice.publish('orders.paid', { id: 'o1' }, { eventId: 'o1-paid' })
  expect(await env.sluice.drain()).toMatchObject({ completed: 2, retried: 2 })
  expect(await env.sluice.drain()).toMatchObject({ deadLettered: 2 })
  const dead = await env.sluice.deadLetters.list()
  expect(
    dead.map((d) => ({ name: d.name, payload: d.payload })).sort((a, b) => a.name.localeCompare(b.name)),
  ).toEqual(
    [
      {
        name: 'flaky',
        payload: expect.objectContaining({ topic: 'orders.paid', eventId: 'o1-paid', payload: { id: 'o1' } }),
      },
      { name: 'flaky', payload: expect.objectContaining({ topic: 'orders.created', eventId: 'o1-created' }) },
    ].sort((a, b) => a.name.localeCompare(b.name)),
  )
  expect(dead[0]!.lastError).toMatchObject({ message: 'downstream is down', attempt: 2 })

  await expect(env.sluice.replay({ topic: 'orders..x' })).rejects.toMatchObject({ code: 'INVALID_INPUT' })
  expect(await env.sluice.replay({ subscriber: 'steady' })).toEqual([])
  fail = false
  expect(await env.sluice.replay('o1-paid')).toHaveLength(1)
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await env.sluice.replay({ topic: 'orders.#', subscriber: 'flaky' })).toHaveLength(1)
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await env.sluice.deadLetters.list()).toEqual([])
  expect(
    await env.sql(`SELECT event_id FROM $schema.processed_events WHERE subscriber = 'flaky' ORDER BY 1`),
  ).toEqual([{ event_id: 'o1-created' }, { event_id: 'o1-paid' }])
})

test('a handler that fails inside ctx.transaction rolls back its effect and the mark; its error stands', async () => {
  const schema = `idem_${process.pid}_${Date.now().toString(36)}_f`
  let mode: 'permanent' | 'twice' | 'ok' = 'permanent'
  const picky = defineSubscriber({
    name: 'picky',
    topic: 'refunds.issued',
    retry: { maxAttempts: 3, baseDelayMs: 0, jitter: 0 },
    run: async (_, ctx) => {
      await ctx.transaction(async (tx) => {
        await tx.query({
          text: `INSERT INTO "${schema}".side_effects (event_id, amount) VALUES ($1, 1)`,
          values: [ctx.event.id],
        })
        if (mode === 'permanent') throw new PermanentJobError('refund rejected')
      })
      if (mode === 'twice') await ctx.transaction(async () => {})
    },
  })
  env = await makeSluice({ schema, subscribers: [picky] })
  await env.sql(`CREATE TABLE $schema.side_effects (event_id text NOT NULL, amount integer NOT NULL)`)
  await env.sluice.publish('refunds.issued', {}, { eventId: 'r-1' })
  // The handler's own error class survives the transaction: dead-lettered at once.
  expect(await env.sluice.drain()).toMatchObject({ deadLettered: 1 })
  expect(await env.sql(`SELECT 1 FROM $schema.side_effects`)).toEqual([])
  expect(await env.sql(`SELECT 1 FROM $schema.processed_events`)).toEqual([])

  // A second ctx.transaction in one run is refused; the first one's effect and mark stand, so
  // the retry finds the event processed and completes without running the handler.
  mode = 'twice'
  expect(await env.sluice.replay('r-1')).toHaveLength(1)
  expect(await env.sluice.drain()).toMatchObject({ retried: 1 })
  const [job] = await env.sql<{ last_error: { code: string } }>(`SELECT last_error FROM $schema.jobs`)
  expect(job!.last_error).toMatchObject({ code: 'UNSUPPORTED' })
  mode = 'ok'
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.side_effects`)).toEqual([{ n: 1 }])
})
