import type { QueryEvent } from '../../src/index.js'
import { type ClaimedRow, settle } from '../../src/sql/index.js'
import { fillArchive } from '../lib/archive.js'
import { explain, explainNested, planFigures, rolledBack, scalar, settleDown } from '../lib/pg.js'
import { schemaName, sizes } from '../lib/sizes.js'
import { summarize } from '../lib/stats.js'
import type { BenchContext, Measurement, Scenario } from '../lib/types.js'
import { type BenchSluice, JOB, openSluice, QUEUE } from '../systems/sluice.js'

const BIG_BATCH = 50
const human = (n: number): string =>
  n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n)

/** Tops the queue up to `n` due jobs with one INSERT … SELECT generate_series (run_at spread over the past hour). */
async function topUp(ctx: BenchContext, b: BenchSluice, n: number): Promise<void> {
  const have = await scalar(ctx.admin, `SELECT count(*) FROM ${b.t}.jobs WHERE run_at <= now()`)
  if (have >= n) return
  await ctx.admin.query(
    `INSERT INTO ${b.t}.jobs (queue, name, payload, run_at)
SELECT $1, $2, jsonb_build_object('n', g), now() - interval '1 hour' + g * (interval '1 hour' / $3::int)
FROM generate_series(1, $3::int - $4::int) g`,
    [QUEUE, JOB, n, have],
  )
}

interface Sampled {
  claim: number[]
  settle: number[]
  last: QueryEvent | undefined
}

/** Runs `count` drains of `maxJobs` jobs and keeps the durations of their claim and settle statements. */
async function sample(b: BenchSluice, count: number, maxJobs: number): Promise<Sampled> {
  const out: Sampled = { claim: [], settle: [], last: undefined }
  for (let i = 0; i < count; i++) {
    b.log.reset()
    await b.sluice.drain({ maxJobs })
    for (const e of b.log.events) {
      const kind = b.kindOf(e)
      if (kind === 'claim') {
        out.claim.push(e.durationMs)
        out.last = e
      } else if (kind.startsWith('settle')) out.settle.push(e.durationMs)
    }
  }
  return out
}

const show = (s: ReturnType<typeof summarize>): string =>
  `p50 ${s.p50.toFixed(2)} ms · p99 ${s.p99.toFixed(2)} ms`

export const claimLatency: Scenario = {
  name: 'claim-latency',
  title: 'Claim latency against the backlog (statement time seen by onQuery)',
  async run(ctx) {
    const { backlogs, archiveRows, latencySamples: k } = sizes(ctx.size)
    const b = await openSluice(ctx.url, schemaName('sluice_claim'))
    const out: Measurement[] = []
    const attachments: Record<string, unknown> = {}
    try {
      const stages = [
        ...backlogs.map((n) => ({ ready: n, archived: 0 })),
        { ready: backlogs[backlogs.length - 1]!, archived: archiveRows },
      ]
      let empty: number | undefined
      let largest: number | undefined
      let emptyServer: number | undefined
      let largestServer: number | undefined
      let lastClaim: QueryEvent | undefined
      for (const stage of stages) {
        const name = `${human(stage.ready)} ready${stage.archived ? ` + ${human(stage.archived)} archived` : ''}`
        ctx.log(`claim latency: ${name}`)
        await topUp(ctx, b, stage.ready)
        if (stage.archived)
          await fillArchive(ctx.admin, b.t, { jobs: stage.archived, queue: QUEUE, name: JOB })
        await settleDown(ctx.admin, b.schema)
        await sample(b, 20, 1)
        const one = await sample(b, k, 1)
        await topUp(ctx, b, stage.ready)
        const many = await sample(b, Math.ceil(k / 2), BIG_BATCH)
        if (many.last) lastClaim = many.last
        // The server's side of one single-job claim (rolled back): execution time and buffers touched.
        const probe = one.last
        const server = probe
          ? planFigures(await rolledBack(ctx.admin, (client) => explain(client, probe.text, probe.values)))
          : undefined
        const s1 = summarize(one.claim)
        const s50 = summarize(many.claim)
        const st50 = summarize(many.settle)
        const key = `${stage.ready}${stage.archived ? `+${stage.archived}a` : ''}`
        out.push(
          {
            id: `claim.1.${key}`,
            scenario: 'claim-latency',
            system: 'sluice',
            label: `claim, drain({ maxJobs: 1 }), ${name}`,
            value: s1.p50,
            unit: 'ms',
            display: `${show(s1)}${server ? ` · server ${server.executionMs.toFixed(2)} ms, ${server.buffers} buffers` : ''}`,
            details: { claim: s1, settle: summarize(one.settle), server },
          },
          {
            id: `claim.${BIG_BATCH}.${key}`,
            scenario: 'claim-latency',
            system: 'sluice',
            label: `claim of a ${BIG_BATCH}-job batch, ${name}`,
            value: s50.p50,
            unit: 'ms',
            display: show(s50),
            details: { claim: s50 },
          },
          {
            id: `settle.${BIG_BATCH}.${key}`,
            scenario: 'claim-latency',
            system: 'sluice',
            label: `settle of a ${BIG_BATCH}-job batch (+ invocation end), ${name}`,
            value: st50.p50,
            unit: 'ms',
            display: show(st50),
            details: { settle: st50 },
          },
        )
        if (stage.ready === 0) {
          empty = s1.p50
          emptyServer = server?.executionMs
        }
        if (stage.archived === 0) {
          largest = s1.p50
          largestServer = server?.executionMs
        }
      }
      if (empty !== undefined && largest !== undefined) {
        out.push({
          id: 'claim.p50-growth',
          scenario: 'claim-latency',
          system: 'sluice',
          label: `claim p50 at ${human(backlogs[backlogs.length - 1]!)} ready ÷ claim p50 on an empty queue`,
          value: largest / empty,
          unit: '×',
          display: `${(largest / empty).toFixed(2)}×`,
        })
      }
      if (emptyServer !== undefined && largestServer !== undefined) {
        out.push({
          id: 'claim.server-growth',
          scenario: 'claim-latency',
          system: 'sluice',
          label: `server execution time of a single-job claim at ${human(backlogs[backlogs.length - 1]!)} ready ÷ on an empty queue`,
          value: largestServer / emptyServer,
          unit: '×',
          display: `${(largestServer / emptyServer).toFixed(2)}× (${largestServer.toFixed(2)} ms ÷ ${emptyServer.toFixed(2)} ms)`,
        })
      }
      if (lastClaim) {
        ctx.log('EXPLAIN (ANALYZE, BUFFERS) of claim and settle at the largest backlog')
        const claimEvent = lastClaim
        attachments.explain = await rolledBack(ctx.admin, async (client) => {
          const claimPlan = await explainNested(client, claimEvent.text, claimEvent.values)
          const { rows } = await client.query<ClaimedRow>(claimEvent.text, claimEvent.values as unknown[])
          const settleStatement = settle(b.t, {
            completions: rows.map((r) => ({
              id: r.id,
              token: r.token,
              status: 'completed',
              durationMs: 0,
              waitMs: 0,
            })),
            failures: [],
            handBacks: [],
            finish: { invocationId: String(claimEvent.values[3]), queues: [QUEUE] },
          })
          const settlePlan = await explainNested(client, settleStatement.text, settleStatement.values)
          return {
            claim: { text: claimEvent.text, values: claimEvent.values, plan: claimPlan },
            settle: { text: settleStatement.text, rows: rows.length, plan: settlePlan },
          }
        })
      }
    } finally {
      await b.close()
    }
    return {
      measurements: out,
      attachments,
      notes: [
        `${k} drains of maxJobs 1 and ${Math.ceil(k / 2)} of ${BIG_BATCH} per stage after 20 warm-up drains; jobs and archive rows inserted with generate_series, then VACUUM ANALYZE.`,
        'Server = EXPLAIN (ANALYZE, BUFFERS) of one single-job claim at that stage, in a rolled-back transaction: execution time without planning, round trip or commit, and the buffers it touched.',
        'EXPLAIN (ANALYZE, BUFFERS) of the claim and settle statements at the largest stage is in the JSON output.',
      ],
    }
  },
}
