/**
 * The overview's counts on clustered data: 100,000 jobs loaded as users load them, enqueueMany in
 * chunks of 1,000 queue by queue, so each queue's rows share pages (the worst case for a block
 * sample). Small states are exact whatever their neighbours; a large one is an estimate whose
 * stated margin holds the true count.
 */
import { afterAll, beforeAll, expect, test } from 'vitest'
import * as z from 'zod'
import { defineJob } from '../../src/index.js'
import { type Overview, type OverviewQueue, overview } from '../../src/sql/overview.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { type RowFactory, rowFactory } from '../helpers/rows.js'

const input = z.object({ i: z.number() })
const noop = async () => {}
const bulk = defineJob({ name: 'bulk', queue: 'bulk', input, run: noop })
const later = defineJob({ name: 'later', queue: 'later', input, run: noop })
const tiny = defineJob({ name: 'tiny', queue: 'tiny', input, run: noop })

let t: TestSluice
let rows: RowFactory
const truth: Record<string, { ready: number; scheduled: number; retrying: number }> = {
  bulk: { ready: 60_000, scheduled: 0, retrying: 0 },
  later: { ready: 0, scheduled: 39_992, retrying: 3 },
  tiny: { ready: 5, scheduled: 0, retrying: 0 },
}

async function load(job: typeof bulk, count: number, delay?: number): Promise<void> {
  for (let from = 0; from < count; from += 1_000) {
    const inputs = Array.from({ length: Math.min(1_000, count - from) }, (_, i) => ({ i: from + i }))
    await t.sluice.enqueueMany(job, inputs, delay ? { delay } : {})
  }
}

beforeAll(async () => {
  t = await makeSluice({ jobs: [bulk, later, tiny] })
  rows = rowFactory(t.admin, `"${t.schema}"`)
  await load(bulk, 60_000)
  await load(later, 39_992, 3_600_000)
  for (let i = 0; i < 3; i++) await rows.failed(1, { queue: 'later', name: 'later', dueInMs: 3_600_000 })
  await load(tiny, 5)
  // As autovacuum leaves the table: a visibility map for the index-only counts, statistics.
  await t.sql('VACUUM (ANALYZE) $schema.jobs')
}, 120_000)
afterAll(() => t.cleanup())

async function sampled(samplePages: number): Promise<Overview> {
  const statement = overview(`"${t.schema}"`, t.schema, [], { exactPages: 0, exactRows: 2_000, samplePages })
  return (await t.admin.query<Overview>(statement.text, [...statement.values])).rows[0]!
}

const byQueue = (o: Overview): Record<string, OverviewQueue> =>
  Object.fromEntries(o.queues.map((q) => [q.queue, q]))

test('the exact path counts every state', async () => {
  const q = byQueue(await t.sluice.inspect.overview())
  for (const [name, states] of Object.entries(truth)) expect(q[name]).toMatchObject(states)
})

test('small states are exact beside large clustered ones; large ones fall within their margin', async () => {
  let covered = 0
  let estimates = 0
  for (let run = 0; run < 20; run++) {
    const q = byQueue(await sampled(200))
    // The queue of 5 and the 3 retrying jobs beside 39,992 scheduled: exact, every time.
    expect(q.tiny).toMatchObject({
      ...truth.tiny,
      estimated: false,
      margin: { ready: 0, scheduled: 0, retrying: 0 },
    })
    expect(q.later).toMatchObject({ ready: 0, retrying: 3 })
    expect(q.later!.margin).toMatchObject({ ready: 0, retrying: 0 })
    expect(q.bulk).toMatchObject({ scheduled: 0, retrying: 0 })
    for (const [name, state] of [
      ['bulk', 'ready'],
      ['later', 'scheduled'],
    ] as const) {
      const figure = q[name]!
      const actual = truth[name]![state]
      const margin = figure.margin[state]
      expect(figure.estimated).toBe(true)
      // Never below the exact lower bound the capped index scans found.
      expect(figure[state]).toBeGreaterThanOrEqual(2_000)
      if (margin === null) continue
      estimates++
      const error = Math.abs(figure[state] - actual)
      if (error <= margin) covered++
      // Two standard errors is the stated margin. It is estimated from the same blocks as the
      // count, so a sample that caught few of a queue's blocks comes out low with a narrow
      // margin: with this layout (each large state on one to three thousand blocks, 200
      // sampled) an estimate is off by more than four standard errors about 3 times in 10,000
      // (exact binomial), which 40 estimates a run meet about once in 80 runs; by more than six,
      // about once in a million.
      expect(error).toBeLessThanOrEqual(3 * margin)
    }
  }
  // About 95 % of intervals hold the truth; well under that would mean the margin is understated.
  expect(covered).toBeGreaterThanOrEqual(Math.floor(estimates * 0.8))
}, 120_000)
