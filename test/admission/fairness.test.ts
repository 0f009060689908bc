/**
 * Fair interleave: a partition with a large backlog enqueued first does not hold back the small
 * partitions enqueued after it, and alone it still fills every claim.
 */
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { logAdmissions } from '../helpers/admissions.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

let env: TestSluice | undefined
afterEach(async () => {
  await env?.cleanup()
  env = undefined
})

const BIG = 50_000
const SMALL = 'BCDEFGHIJK'.split('')
const PER_SMALL = 10
const BATCH = 64

test('50,000 jobs of A enqueued first, 10 each of B…K: every job of B…K is admitted within the first two claims, and A alone fills every claim', async () => {
  const job = defineJob({
    name: 'fair-job',
    input: z.object({ p: z.string(), n: z.number() }),
    admission: { partition: (i) => i.p, fair: true },
    run: () => {},
  })
  env = await makeSluice({ jobs: [job] })
  await logAdmissions(env)
  const started = Date.now()
  for (let from = 0; from < BIG; from += 10_000) {
    await env.sluice.enqueueMany(
      job,
      Array.from({ length: 10_000 }, (_, i) => ({ p: 'A', n: from + i })),
    )
  }
  console.info(`enqueueMany of ${BIG} admission jobs: ${Date.now() - started} ms`)
  for (const p of SMALL) {
    await env.sluice.enqueueMany(
      job,
      Array.from({ length: PER_SMALL }, (_, n) => ({ p, n })),
    )
  }

  // One drain, claims of 64, run until 100 claims have been made (6,400 jobs): sequential claims
  // (one in flight at a time), so claim order is the admission log's transaction order.
  const summary = await env.sluice.drain({
    batchSize: BATCH,
    maxJobs: 100 * BATCH,
    concurrency: 16,
    queues: ['default'],
    pipeline: 1,
  })
  expect(summary.claimed).toBe(100 * BATCH)

  // With quantum 1 the 11 partitions take turns within a claim: every partition's oldest job, then
  // every partition's second, and so on (within a turn, by age; A's backlog is older than every
  // small job). A claim of 64 takes 5 turns of all 11 (55) and 9 of the sixth, so every job of
  // B…K is admitted within the first two claims (128 jobs of 56,000), each partition's in order,
  // where without the interleave they would wait behind all 50,000 of A.
  const claims = await env.sql<{ c: number; partition_key: string; n: number; ns: number[] }>(
    `SELECT dense_rank() OVER (ORDER BY l.claim)::int AS c, l.partition_key, count(*)::int AS n,
            array_agg((j.payload->>'n')::int ORDER BY (j.payload->>'n')::int) AS ns
     FROM $schema.admission_log l
     JOIN (SELECT id, payload FROM $schema.jobs UNION ALL SELECT id, payload FROM $schema.archive) j ON j.id = l.job_id
     GROUP BY l.claim, l.partition_key ORDER BY l.claim, l.partition_key`,
  )
  const byClaim = new Map<number, Map<string, { n: number; ns: number[] }>>()
  for (const row of claims) {
    const parts = byClaim.get(row.c) ?? new Map()
    parts.set(row.partition_key, { n: row.n, ns: row.ns })
    byClaim.set(row.c, parts)
  }
  expect(byClaim.size).toBeGreaterThanOrEqual(100)
  const first = byClaim.get(1)!
  const second = byClaim.get(2)!
  for (const p of SMALL) {
    const one = first.get(p)?.ns ?? []
    const two = second.get(p)?.ns ?? []
    // Five or six turns in claim 1, the rest in claim 2, oldest first.
    expect(one.length, `claim 1, partition ${p}`).toBeGreaterThanOrEqual(5)
    expect([...one, ...two], `claims 1 and 2, partition ${p}`).toEqual(
      Array.from({ length: PER_SMALL }, (_, n) => n),
    )
  }
  expect(first.get('A')?.n).toBe(
    BATCH - [...first.entries()].filter(([p]) => p !== 'A').reduce((a, [, v]) => a + v.n, 0),
  )
  expect(first.get('A')?.n).toBeGreaterThanOrEqual(5)
  // Once B…K are empty, A is alone and every claim is a full one of its jobs, in order.
  // (Claim 2 reads a share of each partition, 6 of A, and says there is more.)
  for (let c = 3; c < byClaim.size; c++) {
    const parts = byClaim.get(c)!
    expect([...parts.keys()]).toEqual(['A'])
    expect(parts.get('A')!.n).toBe(BATCH)
  }
  expect([...byClaim.get(byClaim.size)!.keys()]).toEqual(['A'])
  const [{ small_left }] = (await env.sql(
    `SELECT count(*)::int AS small_left FROM $schema.jobs WHERE partition_key <> 'A'`,
  )) as [{ small_left: number }]
  expect(small_left).toBe(0)

  // How fast A drains alone, against a plain queue, is a benchmark (bench/admission.ts), not a
  // timed test: what is asserted here is that A alone fills every claim.
}, 60_000)
