import { loadavg } from 'node:os'
import { DRAIN_DEFAULTS } from '../../src/config.js'
import { metered } from '../lib/cpu.js'
import { pool, scalar, settleDown } from '../lib/pg.js'
import { schemaName, sizes } from '../lib/sizes.js'
import { summarize } from '../lib/stats.js'
import type { BenchContext, Measurement, Scenario } from '../lib/types.js'
import {
  drainGraphile,
  fillGraphile,
  type GraphileWorkerConfig,
  graphileErrors,
  graphilePool,
  migrateGraphile,
} from '../systems/graphile.js'
import { fetchLoop, fillBoss, openBoss, workLoop } from '../systems/pgboss.js'
import { drainAll, fillSluice, openSluice, QUEUE } from '../systems/sluice.js'

export const SLUICE_SERIAL = 'processing.sluice.drain'
export const SLUICE_PARALLEL = 'processing.sluice.drain-x4'
/** The drain loop on a queue set to `archive: false`: completed jobs kept nowhere, as graphile-worker's. */
export const SLUICE_NO_ARCHIVE = 'processing.sluice.drain-no-archive'
export const GRAPHILE_BATCHED = 'processing.graphile.batched'
const PARALLEL = 4
/** Batch-size settings of the peers follow Sluice's default, so that batches compare like for like. */
export const BATCH = DRAIN_DEFAULTS.batchSize
/** pg-boss's fetch loops stop after this long (see fetchLoop). */
const FETCH_CAP_MS = 20_000

/** graphile-worker configurations: defaults at Sluice's concurrency, then its batching options. */
export const GRAPHILE_CONFIGS: { id: string; label: string; config: GraphileWorkerConfig }[] = [
  {
    id: 'processing.graphile.default',
    label: 'runOnce, concurrentJobs 10, defaults otherwise',
    config: { concurrentJobs: 10 },
  },
  {
    id: GRAPHILE_BATCHED,
    label: `runOnce, concurrentJobs 10, localQueue.size ${BATCH} (Sluice's batch), completeJobBatchDelay 0, failJobBatchDelay 0`,
    config: {
      concurrentJobs: 10,
      localQueue: { size: BATCH },
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
    },
  },
  {
    id: 'processing.graphile.perf-preset',
    label:
      "graphile's published perf preset: concurrentJobs 24, maxPoolSize 25, localQueue.size 500, batch delays 0",
    config: {
      concurrentJobs: 24,
      maxPoolSize: 25,
      localQueue: { size: 500 },
      completeJobBatchDelay: 0,
      failJobBatchDelay: 0,
    },
  },
]

const rate = (n: number, ms: number): number => Math.round((n / ms) * 1000)

function check(what: string, handled: number, n: number): void {
  if (handled !== n) throw new Error(`${what}: ran ${handled} jobs, expected ${n}`)
}

async function sluiceRun(
  ctx: BenchContext,
  n: number,
  parallel: number,
  { archive = true }: { archive?: boolean } = {},
): Promise<Measurement> {
  const schema = schemaName('sluice_proc')
  const b = await openSluice(ctx.url, schema, archive ? {} : { queues: { [QUEUE]: { archive: false } } })
  try {
    await fillSluice(b, n)
    await settleDown(ctx.admin, schema)
    b.log.reset()
    const { result: calls, ms, cost } = await metered(ctx.admin, n, () => drainAll(b, parallel))
    check('sluice', b.handled.count, n)
    const left = await scalar(ctx.admin, `SELECT count(*) FROM "${schema}".jobs`)
    if (left !== 0) throw new Error(`sluice left ${left} jobs behind`)
    const claims = b.log.events.filter((e) => b.kindOf(e) === 'claim')
    const settles = b.log.events.filter((e) => b.kindOf(e).startsWith('settle'))
    const dbMs = [...claims, ...settles].reduce((a, e) => a + e.durationMs, 0)
    return {
      id: !archive ? SLUICE_NO_ARCHIVE : parallel === 1 ? SLUICE_SERIAL : SLUICE_PARALLEL,
      scenario: 'processing',
      system: 'sluice',
      label: !archive
        ? 'drain() loop, defaults, on a queue set to archive: false (completed jobs kept nowhere, as graphile-worker)'
        : parallel === 1
          ? `drain() loop, defaults (batch ${b.sluice.config.drain.batchSize}, concurrency ${b.sluice.config.drain.concurrency})`
          : `${parallel} drain() loops at once`,
      value: rate(n, ms),
      unit: 'jobs/s',
      cost,
      details: {
        jobs: n,
        ms: Math.round(ms),
        loadavg: loadavg(),
        drainCalls: calls,
        statements: b.log.count,
        claimMs: summarize(claims.map((e) => e.durationMs)),
        settleMs: summarize(settles.map((e) => e.durationMs)),
        /** Share of the wall time a statement was in flight (summed over loops). */
        dbShare: Math.round((dbMs / (ms * parallel)) * 100) / 100,
      },
    }
  } finally {
    await b.close()
  }
}

async function graphileRun(
  ctx: BenchContext,
  n: number,
  c: (typeof GRAPHILE_CONFIGS)[number],
): Promise<Measurement> {
  const schema = schemaName('gw_proc')
  await migrateGraphile(ctx.url, schema)
  await fillGraphile(ctx.url, schema, n, 5000)
  await settleDown(ctx.admin, schema)
  const gwPool = graphilePool(ctx.url, c.config.maxPoolSize ?? 10)
  let run: Awaited<ReturnType<typeof metered<number>>>
  try {
    run = await metered(ctx.admin, n, () => drainGraphile(gwPool, schema, c.config))
  } finally {
    await gwPool.end()
  }
  const { result: handled, ms, cost } = run
  check(`graphile-worker ${c.id}`, handled, n)
  const left = await scalar(ctx.admin, `SELECT count(*) FROM "${schema}"._private_jobs`)
  if (left !== 0) throw new Error(`graphile-worker left ${left} jobs behind; ${graphileErrors.join('; ')}`)
  return {
    id: c.id,
    scenario: 'processing',
    system: 'graphile-worker',
    label: c.label,
    value: rate(n, ms),
    unit: 'jobs/s',
    cost,
    details: { jobs: n, ms: Math.round(ms), loadavg: loadavg(), config: c.config },
  }
}

async function bossRuns(ctx: BenchContext, n: number): Promise<Measurement[]> {
  const out: Measurement[] = []
  const variants = [
    { id: 'processing.pgboss.fetch', label: `fetch(batchSize ${BATCH}) + complete(ids) loop`, parallel: 1 },
    {
      id: 'processing.pgboss.fetch-x4',
      label: `${PARALLEL} fetch(batchSize ${BATCH}) + complete(ids) loops`,
      parallel: PARALLEL,
    },
    {
      id: 'processing.pgboss.work',
      label: `work({ batchSize 500, localConcurrency ${PARALLEL}, burstWhenBatchFull, pollingIntervalSeconds 0.5 })`,
      parallel: 0,
    },
  ]
  for (const v of variants) {
    const schema = schemaName('boss_proc')
    const boss = await openBoss(ctx.url, schema)
    const counter = pool(ctx.url, 1)
    try {
      await fillBoss(boss, n, 5000)
      await settleDown(ctx.admin, schema)
      const {
        result: handled,
        ms,
        cost,
      } = await metered(ctx.admin, n, () =>
        v.parallel > 0
          ? fetchLoop(boss, BATCH, v.parallel, FETCH_CAP_MS)
          : workLoop(boss, (sql) => scalar(counter, sql), schema, {
              n,
              batchSize: 500,
              workers: PARALLEL,
              pollingIntervalSeconds: 0.5,
            }),
      )
      const done = await scalar(ctx.admin, `SELECT count(*) FROM "${schema}".job WHERE state = 'completed'`)
      const other = await scalar(
        ctx.admin,
        `SELECT count(*) FROM "${schema}".job WHERE state NOT IN ('completed', 'created')`,
      )
      // A capped fetch loop stops early: what it ran must be exactly what pg-boss shows completed.
      if (v.parallel === 0) check(`pg-boss ${v.id}`, handled, n)
      if (done !== handled || other !== 0)
        throw new Error(`pg-boss ${v.id}: ran ${handled}, ${done} completed, ${other} in another state`)
      const capped = handled < n
      out.push({
        id: v.id,
        scenario: 'processing',
        system: 'pg-boss',
        label: capped
          ? `${v.label}; stopped after ${FETCH_CAP_MS / 1000} s with ${handled} of ${n} done`
          : v.label,
        value: rate(handled, ms),
        unit: 'jobs/s',
        cost: {
          ...cost,
          clientUs: Math.round((cost.clientUs * n) / handled),
          walBytes: Math.round((cost.walBytes * n) / handled),
          serverUs: cost.serverUs === null ? null : Math.round((cost.serverUs * n) / handled),
        },
        details: { jobs: handled, of: n, ms: Math.round(ms), loadavg: loadavg() },
      })
    } finally {
      await boss.stop({ graceful: false })
      await counter.end()
    }
  }
  return out
}

export const processing: Scenario = {
  name: 'processing',
  title: 'Processing throughput: N no-op jobs already enqueued, drained to empty',
  async run(ctx) {
    const n = sizes(ctx.size).processingJobs
    const out: Measurement[] = []
    ctx.log(`sluice: ${n} jobs, one drain loop`)
    const serial = await sluiceRun(ctx, n, 1)
    out.push(serial)
    ctx.log(`sluice: ${n} jobs, ${PARALLEL} drain loops`)
    const parallel = await sluiceRun(ctx, n, PARALLEL)
    out.push(parallel)
    ctx.log(`sluice: ${n} jobs, one drain loop, a queue set to archive: false`)
    out.push(await sluiceRun(ctx, n, 1, { archive: false }))
    for (const c of GRAPHILE_CONFIGS) {
      ctx.log(`graphile-worker: ${c.id}`)
      const m = await graphileRun(ctx, n, c)
      m.ratio = { of: SLUICE_SERIAL, value: serial.value / m.value }
      out.push(m)
    }
    ctx.log('pg-boss')
    for (const m of await bossRuns(ctx, n)) {
      const versus = m.id.endsWith('x4') || m.id.endsWith('work') ? parallel : serial
      m.ratio = { of: versus.id, value: versus.value / m.value }
      out.push(m)
    }
    return {
      measurements: out,
      notes: [
        `N = ${n}; each run on its own schema, VACUUM ANALYZE + CHECKPOINT before the clock starts.`,
        'Ratio = Sluice jobs/s over the peer: single loops against one Sluice drain loop, multi-loop peers against 4 drain loops.',
        'Per job: CPU of the server backends connected to the bench database and of this Node process, and WAL written, divided by N.',
      ],
    }
  },
}
