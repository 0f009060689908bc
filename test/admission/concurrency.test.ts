/**
 * Concurrency per partition and the global cap, across drains on separate connections: running
 * jobs stay within the cap and reach it, every job runs, and a dead drain's slots come back
 * with its leases.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { logAdmissions } from '../helpers/admissions.js'
import { makeSluice, perTestConnections, type TestSluice } from '../helpers/db.js'
import { drainAll, OverlapRecorder, sleep } from '../helpers/overlap.js'

let env: TestSluice | undefined
const { connections, closeAll } = perTestConnections(() => env!.schema)
afterEach(async () => {
  await closeAll()
  await env?.cleanup()
  env = undefined
})

test('max 3 per partition, 6 drains, 300 jobs on 5 partitions: each partition runs at most 3 at once, reaches 3, and every job runs', async () => {
  const PARTITIONS = ['a', 'b', 'c', 'd', 'e']
  const recorders = new Map(PARTITIONS.map((p) => [p, new OverlapRecorder()]))
  // Until a partition has had 3 runs at once, its runs hold their slot until it does (or 10 s
  // pass, when the cap would have kept it under 3): reaching the cap is then a condition the
  // drains meet, not a matter of timing. After that, each run takes 15 ms.
  const reached = new Set<string>()
  const job = defineJob({
    name: 'capped-per-partition',
    input: z.object({ p: z.string(), n: z.number() }),
    admission: { partition: (i) => i.p, concurrency: { max: 3 } },
    run: (input) => {
      const recorder = recorders.get(input.p)!
      return recorder.track(`${input.p}:${input.n}`, async () => {
        const giveUp = Date.now() + 10_000
        while (!reached.has(input.p) && recorder.current < 3 && Date.now() < giveUp) await sleep(5)
        if (recorder.current >= 3) reached.add(input.p)
        await sleep(15)
      })
    },
  })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: 300 }, (_, n) => ({ p: PARTITIONS[n % PARTITIONS.length]!, n })),
  )

  const drains = connections({ jobs: [job] }, 6)
  expect(await drainAll(drains, { concurrency: 8, batchSize: 8 }, { total: 300 })).toBe(300)
  for (const [p, recorder] of recorders) {
    expect(recorder.max, `partition ${p}`).toBe(3)
    expect(new Set(recorder.starts.map((s) => s.key)).size, `partition ${p}`).toBe(60)
  }
  expect(await env.sql(`SELECT count(*)::int AS n FROM $schema.jobs`)).toEqual([{ n: 0 }])
}, 90_000)

test("a dead drain's slots come back with its leases: nothing more is admitted in its partition until they end, then everything runs", async () => {
  const ran: number[] = []
  const job = defineJob({
    name: 'capped-lease',
    input: z.object({ n: z.number() }),
    admission: { partition: () => 'only', concurrency: { max: 3 } },
    run: (input) => void ran.push(input.n),
  })
  env = await makeSluice({ jobs: [job] })
  await logAdmissions(env)
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: 6 }, (_, n) => ({ n })),
  )
  // A drain claims three jobs (the cap) with a 3 s lease and dies: it never settles.
  const dead = await env.sql<{ id: string }>(
    `SELECT id FROM $schema.claim(ARRAY['default'], 10, 3000, 'dead-drain', 0, 0) WHERE id IS NOT NULL`,
  )
  expect(dead).toHaveLength(3)
  const [{ lease_end, now }] = (await env.sql(
    `SELECT max(lease_until) AS lease_end, now() FROM $schema.jobs WHERE leased_by = 'dead-drain'`,
  )) as [{ lease_end: Date; now: Date }]
  // The live drain starts well before the leases end (on the database's clock).
  expect(lease_end.getTime() - now.getTime()).toBeGreaterThan(2_000)

  // A live drain keeps trying: while the leases last it admits nothing from the partition; once
  // they end it admits again, the dead drain's three jobs (re-delivered) and the other three.
  const [live] = connections({ jobs: [job] }, 1)
  let completed = 0
  let emptyDrains = 0
  for (let i = 0; i < 400 && completed < 6; i++) {
    const s = await live!.drain()
    completed += s.completed
    if (s.claimed === 0) {
      emptyDrains++
      await sleep(25)
    }
  }
  expect(emptyDrains).toBeGreaterThan(0)
  expect(completed).toBe(6)
  expect(ran.sort()).toEqual([0, 1, 2, 3, 4, 5])
  // Every admission after the dead drain's was decided at or after its leases' end (the claim
  // counts a lease as running while run_at > now()).
  const later = await env.sql<{ claimed_at: Date }>(
    `SELECT claimed_at FROM $schema.admission_log WHERE invocation <> 'dead-drain'`,
  )
  expect(later).toHaveLength(6)
  for (const { claimed_at } of later) expect(claimed_at.getTime()).toBeGreaterThanOrEqual(lease_end.getTime())
}, 30_000)

test('global cap 4 across 6 partitions, 4 drains: at most 4 of the policy run at once, and 4 do', async () => {
  const recorder = new OverlapRecorder()
  // As above: until 4 have run at once, runs hold their slot until they do (or 10 s pass).
  let reached = false
  const job = defineJob({
    name: 'globally-capped',
    input: z.object({ p: z.string(), n: z.number() }),
    admission: { partition: (i) => i.p, globalCap: { max: 4 } },
    run: (input) =>
      recorder.track(`${input.p}:${input.n}`, async () => {
        const giveUp = Date.now() + 10_000
        while (!reached && recorder.current < 4 && Date.now() < giveUp) await sleep(5)
        if (recorder.current >= 4) reached = true
        await sleep(15)
      }),
  })
  env = await makeSluice({ jobs: [job] })
  await env.sluice.enqueueMany(
    job,
    Array.from({ length: 120 }, (_, n) => ({ p: `p${n % 6}`, n })),
  )
  const drains = connections({ jobs: [job] }, 4)
  expect(await drainAll(drains, { concurrency: 8, batchSize: 8 }, { total: 120 })).toBe(120)
  expect(recorder.max).toBe(4)
  expect(new Set(recorder.starts.map((s) => s.key)).size).toBe(120)
}, 60_000)
