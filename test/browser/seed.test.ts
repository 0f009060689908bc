/**
 * The browser tests' seed really is in the states they assert on: checked here in SQL, without a
 * browser, so a change to Sluice that stops producing one of them fails here and not as a
 * puzzling page.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import { QUEUES, type Seeded, seed } from './seed.js'

let s: Seeded
beforeAll(async () => {
  s = await seed()
}, 60_000)
afterAll(() => s?.cleanup())

test('jobs wait for the reason they were seeded with', async () => {
  const rows = await s.sql<{ id: string; queue: string; attempts: number; leased: boolean; due: boolean }>(
    `SELECT id::text, queue, attempts, lease_token IS NOT NULL AS leased, run_at <= now() AS due
     FROM $schema.jobs`,
  )
  const byId = new Map(rows.map((r) => [r.id, r]))
  for (const id of s.ids.ready) expect(byId.get(id)).toMatchObject({ leased: false, due: true })
  expect(byId.get(s.ids.scheduled)).toMatchObject({ due: false, attempts: 0 })
  expect(byId.get(s.ids.retrying)).toMatchObject({ due: false, attempts: 1 })
  for (const id of s.ids.running) expect(byId.get(id)?.leased).toBe(true)
  expect(byId.get(s.ids.heldBySingleConsumer)).toMatchObject({ leased: false, due: true })
  expect(byId.get(s.ids.atCap)).toMatchObject({ leased: false, due: true })
  expect(byId.get(s.ids.throttled)).toMatchObject({ leased: false, due: true })
  expect(byId.get(s.ids.breakerOpen)).toMatchObject({ leased: false, due: true })
  expect(byId.get(s.ids.paused)?.queue).toBe(QUEUES.paused)
  expect(s.ids.deadLetters).toHaveLength(3)
})

test('controls and gates are in the seeded state', async () => {
  const states = Object.fromEntries((await s.sluice.queueStates()).map((q) => [q.name, q]))
  expect(states[QUEUES.paused]).toMatchObject({ paused: true })
  expect(states[QUEUES.breaker]?.breakerUntil?.getTime()).toBeGreaterThan(Date.now())
  expect(states[QUEUES.ledger]?.leaseHolder).toBe(s.invocation)
  const [throttled] = await s.sluice.inspect.partitions('deliver-webhook')
  expect(throttled?.reason).toMatch(/^throttled: next token in/)
  const [capped] = await s.sluice.inspect.partitions('partner-call')
  expect(capped?.reason).toBe('partition at its cap 1/1')
  const [blocked] = await s.sql(`SELECT count(*)::int AS n FROM $schema.blocked`)
  expect(blocked).toEqual({ n: 1 })
  const [outbox] = await s.sql(`SELECT count(*)::int AS n FROM $schema.outbox WHERE published_at IS NULL`)
  expect(outbox).toEqual({ n: 1 })
  const invocations = await s.sluice.inspect.invocations()
  expect(invocations.map((i) => i.id)).toContain(s.invocation)
})
