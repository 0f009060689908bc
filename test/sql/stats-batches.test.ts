/**
 * Job stats per settled batch: a settle writes one job_stats row per (name, queue, status) with
 * every attempt's run and wait time, and every reader (insights, the overview, the claim's
 * durations) answers what it answered from one row per attempt.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ClaimParams, type Completion, claim, type Failure, settle } from '../../src/sql/index.js'
import { OVERVIEW_LIMITS, type Overview, overview } from '../../src/sql/overview.js'
import { type JobStats, jobStats } from '../../src/sql/stats.js'
import type { SeededJob } from '../helpers/rows.js'
import { type SqlSchema, sqlSchema } from '../helpers/sql-level.js'

let s: SqlSchema
beforeEach(async () => {
  s = await sqlSchema()
})
afterEach(async (context) => {
  await s.cleanup(context)
})

const INV = 'inv-a'
const HOUR = 3_600_000

type Insights = Omit<JobStats, 'sinceMs' | 'statusCounts'>

/** percentile_disc(p): the first value whose cumulative share reaches p. */
const percentileDisc = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!
}

const done = (job: SeededJob, durationMs: number, waitMs: number): Completion => ({
  id: job.id,
  token: String(job.token),
  status: 'completed',
  durationMs,
  waitMs,
})

const fail = (job: SeededJob, durationMs: number, waitMs: number): Failure => ({
  id: job.id,
  token: String(job.token),
  error: { name: 'Error', message: 'again' },
  delayMs: 60_000,
  final: false,
  durationMs,
  waitMs,
})

async function insights(): Promise<Insights> {
  const [row] = await s.run<Insights>(jobStats(s.t, HOUR, 10, null))
  return row!
}

describe('job stats per settled batch', () => {
  it('a settle of N jobs of one name writes one row counting N; insights read what per-attempt rows gave', async () => {
    const N = 40
    // Run times 10, 20, … 400 ms given in a shuffled order; waits 1,000 + i.
    const durations = Array.from({ length: N }, (_, i) => ((i * 7) % N) * 10 + 10)
    const waits = Array.from({ length: N }, (_, i) => 1_000 + i)
    const mail = await Promise.all(durations.map(() => s.rows.leased(INV, { name: 'mail', queue: 'q' })))
    const sms = await Promise.all([1, 2].map(() => s.rows.leased(INV, { name: 'sms', queue: 'q' })))
    const flaky = await Promise.all([1, 2, 3].map(() => s.rows.leased(INV, { name: 'mail', queue: 'q' })))
    await s.run(
      settle(s.t, {
        completions: [
          ...mail.map((j, i) => done(j, durations[i]!, waits[i]!)),
          ...sms.map((j) => done(j, 5, 2)),
        ],
        failures: flaky.map((j) => fail(j, 900, 3)),
        handBacks: [],
      }),
    )

    const rows = await s.sql(
      `SELECT name, queue, status, jobs, cardinality(durations) AS d, cardinality(waits) AS w
       FROM $t.job_stats ORDER BY name, status`,
    )
    expect(rows).toEqual([
      { name: 'mail', queue: 'q', status: 'completed', jobs: N, d: N, w: N },
      { name: 'mail', queue: 'q', status: 'failed', jobs: 3, d: 3, w: 3 },
      { name: 'sms', queue: 'q', status: 'completed', jobs: 2, d: 2, w: 2 },
    ])

    const allDurations = [...durations, 5, 5, 900, 900, 900]
    const allWaits = [...waits, 2, 2, 3, 3, 3]
    const batched = await insights()
    expect(batched.summary).toEqual({
      finished: N + 5,
      completed: N + 2,
      failed: 3,
      dead: 0,
      expired: 0,
      successRate: (N + 2) / (N + 5),
      avgDurationMs: Math.round(allDurations.reduce((a, b) => a + b) / allDurations.length),
      p95DurationMs: percentileDisc(allDurations, 0.95),
      avgWaitMs: Math.round(allWaits.reduce((a, b) => a + b) / allWaits.length),
      p95WaitMs: percentileDisc(allWaits, 0.95),
    })
    expect(batched.throughput.map(({ minute: _, ...n }) => n)).toEqual([
      { completed: N + 2, failed: 3, dead: 0, expired: 0 },
    ])
    expect(batched.slowest).toEqual([
      {
        name: 'mail',
        runs: N + 3,
        avgDurationMs: expect.any(Number),
        p95DurationMs: 900,
        maxDurationMs: 900,
      },
      { name: 'sms', runs: 2, avgDurationMs: 5, p95DurationMs: 5, maxDurationMs: 5 },
    ])
    const [hour] = await s.run<Overview>(overview(s.t, s.schema, [], OVERVIEW_LIMITS))
    expect(hour!.lastHour).toEqual({ completed: N + 2, failed: 3, dead: 0, expired: 0 })

    // The same attempts as rows of the old form, one per attempt, at the same moment: the same answers.
    await s.sql(
      `WITH b AS (DELETE FROM $t.job_stats RETURNING finished_at)
       INSERT INTO $t.job_stats (finished_at, name, queue, status, duration_ms, wait_ms)
       SELECT (SELECT min(finished_at) FROM b), n, 'q', st, d, w
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS a(n, st, d, w)`,
      [
        [...mail.map(() => 'mail'), 'sms', 'sms', 'mail', 'mail', 'mail'],
        [...mail.map(() => 'completed'), 'completed', 'completed', 'failed', 'failed', 'failed'],
        allDurations,
        allWaits,
      ],
    )
    expect(await s.sql('SELECT count(*)::int AS n, sum(jobs)::int AS jobs FROM $t.job_stats')).toEqual([
      { n: N + 5, jobs: N + 5 },
    ])
    expect(await insights()).toEqual(batched)
    const [again] = await s.run<Overview>(overview(s.t, s.schema, [], OVERVIEW_LIMITS))
    expect(again!.lastHour).toEqual(hour!.lastHour)
  })

  it("the claim's durations read every attempt of a batched row, within its sample", async () => {
    const jobs = await Promise.all(Array.from({ length: 10 }, () => s.rows.leased(INV, { name: 'mail' })))
    await s.run(
      settle(s.t, {
        completions: jobs.map((j, i) => done(j, (i + 1) * 100, 0)),
        failures: [],
        handBacks: [],
      }),
    )
    await s.rows.ready({ name: 'mail' })
    const params: ClaimParams = {
      queues: ['default'],
      limit: 1,
      leaseMs: 30_000,
      invocationId: 'inv-b',
      invocationPriority: 0,
      jobsDone: 0,
    }
    const read = async (sample: number) => {
      const [row] = await s.run<{ durations: Record<string, number> }>(
        claim(s.t, params, { names: ['mail'], sinceMs: HOUR, sample }),
      )
      await s.sql('UPDATE $t.jobs SET lease_token = NULL, leased_by = NULL, run_at = now(), attempts = 0')
      return row!.durations
    }
    // p99 of 100 … 1,000 is 1,000; a sample of 3 attempts reads 3 of them, not 3 rows.
    expect(await read(1_000)).toEqual({ mail: 1_000 })
    expect([100, 200, 300, 400, 500, 600, 700, 800, 900, 1_000]).toContain((await read(3)).mail)
    expect(
      await s.run(claim(s.t, params, { names: ['mail'], sinceMs: HOUR, sample: 0 })).then((r) => r.length),
    ).toBe(1)
  })

  it('dead-lettering in maintenance writes one row per name and queue', async () => {
    for (let i = 0; i < 4; i++) await s.rows.exhausted({ name: 'poison' })
    expect(await s.sql('SELECT $t.bury_exhausted(100) AS n')).toEqual([{ n: 4 }])
    expect(await s.sql(`SELECT name, status, jobs, durations, waits FROM $t.job_stats`)).toEqual([
      {
        name: 'poison',
        status: 'dead',
        jobs: 4,
        durations: [null, null, null, null],
        waits: [null, null, null, null],
      },
    ])
    expect((await insights()).summary).toMatchObject({ finished: 4, dead: 4, p95DurationMs: null })
  })
})
