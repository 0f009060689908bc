import { afterAll, beforeAll, expect, test } from 'vitest'
import { z } from 'zod'
import { type DrainSummary, defineJob } from '../../src/index.js'
import { makeSluice, onConnections, type TestSluice } from '../helpers/db.js'

const JOBS = 5_000
const DRAINS = 6
/** More calls than any loop needs: a loop that would never end stops here and fails the test. */
const MAX_CALLS = 200

let env: TestSluice
beforeAll(async () => {
  env = await makeSluice({ jobs: [] })
})
afterAll(async () => {
  await env.cleanup()
})

test(`${DRAINS} drain loops on ${DRAINS} connections run ${JOBS} default-option jobs exactly once in 20 s budgets, and every loop ends`, async () => {
  const runs = new Map<string, number>()
  // Default options: the 30 s default timeout is longer than each drain's budget.
  const job = defineJob({
    name: 'loop-noop',
    input: z.number(),
    run: (_n, ctx) => void runs.set(ctx.id, (runs.get(ctx.id) ?? 0) + 1),
  })
  const { sluices, close } = onConnections(env.schema, { jobs: [job] }, DRAINS)
  try {
    const ids = await sluices[0]!.enqueueMany(
      job,
      Array.from({ length: JOBS }, (_, n) => n),
    )
    const loops = await Promise.all(
      sluices.map(async (sluice) => {
        const summaries: DrainSummary[] = []
        let s: DrainSummary
        do {
          s = await sluice.drain({ budgetMs: 20_000 })
          summaries.push(s)
        } while (s.claimed > 0 && summaries.length < MAX_CALLS)
        return summaries
      }),
    )
    // Every loop ended on a drain that found nothing it could run.
    for (const summaries of loops) expect(summaries.at(-1)!.claimed).toBe(0)
    const all = loops.flat()
    expect(all.reduce((n, s) => n + s.handedBack, 0)).toBe(0)
    expect(all.reduce((n, s) => n + s.completed, 0)).toBe(JOBS)
    // Each job ran once: no duplicates, no misses.
    expect([...runs.values()].filter((n) => n !== 1)).toEqual([])
    expect([...runs.keys()].sort()).toEqual(ids.map((r) => r.id!).sort())
    const [left] = await env.sql<{ jobs: number; archived: number }>(
      `SELECT (SELECT count(*)::int FROM $schema.jobs) AS jobs,
              (SELECT count(*)::int FROM $schema.archive WHERE status = 'completed' AND attempts = 1) AS archived`,
    )
    expect(left).toEqual({ jobs: 0, archived: JOBS })
  } finally {
    await close()
  }
}, 120_000)
