/**
 * Throttle: a partition's token bucket, decided inside the claim, holds across drains on
 * separate connections: over every window from a partition's first admission, what it admitted
 * stays within burst + rate × t, and the drains use nearly all of it.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, type Sluice } from '../../src/index.js'
import { logAdmissions } from '../helpers/admissions.js'
import { makeSluice, perTestConnections, type TestSluice } from '../helpers/db.js'
import { sleep } from '../helpers/overlap.js'

let env: TestSluice | undefined
const { connections, closeAll } = perTestConnections(() => env!.schema)
afterEach(async () => {
  await closeAll()
  await env?.cleanup()
  env = undefined
})

const RATE = 20
const PER_MS = 1_000
const BURST = 5
const PARTITIONS = ['p1', 'p2', 'p3']
const RUN_MS = 7_000

/** Calls drain() on each sluice until `ms` have passed, pausing briefly when it found nothing. */
async function loopDrains(drains: readonly Sluice[], ms: number): Promise<void> {
  const until = Date.now() + ms
  await Promise.all(
    drains.map(async (s) => {
      while (Date.now() < until) {
        const summary = await s.drain({ budgetMs: 5_000 })
        if (summary.claimed === 0) await sleep(5)
      }
    }),
  )
}

test('3 partitions at 20/s, burst 5, 4 drains: every window admits at most burst + rate × t, and uses 90 % of it', async () => {
  const send = defineJob({
    name: 'throttled-send',
    input: z.object({ p: z.string(), n: z.number() }),
    admission: { partition: (i) => i.p, throttle: { rate: RATE, per: PER_MS, burst: BURST } },
    run: () => {},
  })
  env = await makeSluice({ jobs: [send] })
  await logAdmissions(env)
  // More than the run can admit (burst + 20/s × 7 s = 145 per partition): no partition runs dry.
  const perPartition = 400
  for (const p of PARTITIONS) {
    await env.sluice.enqueueMany(
      send,
      Array.from({ length: perPartition }, (_, n) => ({ p, n })),
    )
  }

  await loopDrains(connections({ jobs: [send] }, 4), RUN_MS)
  const [{ end }] = (await env.sql(`SELECT now() AS end`)) as [{ end: Date }]

  // The bucket's clock: a claim refills with its transaction's now(), and never backwards (a
  // claim that started before the last refill gets none), so the instant an admission was paid
  // at is the running maximum of now() over the partition's claims in the order they held its
  // row lock (logged_at). Over a window [t0, t] from the first admission the bucket, full at t0
  // at best, pays out at most burst + rate × (t − t0); counts are checked at every admission
  // (the windows where the count steps up). The only slack allowed, 1e-6 of a token, is for
  // double-precision rounding of the refill (timestamps are exact to the microsecond).
  const windows = await env.sql<{
    partition_key: string
    admitted: number
    worst_excess: number
    bound_at_end: number
    remaining: number
  }>(
    `WITH a AS (
       SELECT partition_key, max(claimed_at) OVER (PARTITION BY partition_key ORDER BY logged_at, seq) AS paid_at
       FROM $schema.admission_log
     ), w AS (
       SELECT partition_key, paid_at,
              count(*) OVER (PARTITION BY partition_key ORDER BY paid_at RANGE UNBOUNDED PRECEDING) AS n,
              min(paid_at) OVER (PARTITION BY partition_key) AS t0
       FROM a
     )
     SELECT w.partition_key, count(*)::int AS admitted,
            max(w.n - ($1 + $2 * extract(epoch FROM w.paid_at - w.t0) * 1000 / $3))::float8 AS worst_excess,
            ($1 + $2 * extract(epoch FROM $4::timestamptz - min(w.t0)) * 1000 / $3)::float8 AS bound_at_end,
            (SELECT count(*)::int FROM $schema.jobs j
             WHERE j.partition_key = w.partition_key AND j.lease_token IS NULL) AS remaining
     FROM w GROUP BY w.partition_key ORDER BY 1`,
    [BURST, RATE, PER_MS, end],
  )
  console.info('throttle windows', windows)
  expect(windows.map((w) => w.partition_key)).toEqual(PARTITIONS)
  for (const w of windows) {
    expect(w.worst_excess, `${w.partition_key} admitted over its bucket`).toBeLessThanOrEqual(1e-6)
    expect(w.admitted, `${w.partition_key} left its tokens unused`).toBeGreaterThanOrEqual(
      0.9 * w.bound_at_end,
    )
    expect(w.remaining).toBeGreaterThan(0)
  }
  // Every claim of a partition was decided on its tokens: it never took more than burst at once.
  const [{ largest }] = (await env.sql(
    `SELECT max(n)::int AS largest FROM (
       SELECT count(*) AS n FROM $schema.admission_log GROUP BY claim, partition_key) c`,
  )) as [{ largest: number }]
  expect(largest).toBeLessThanOrEqual(BURST)
}, 40_000)
