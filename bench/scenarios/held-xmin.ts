import { loadavg } from 'node:os'
import pg from 'pg'
import { type CpuUse, cpuSince, cpuSnapshot } from '../lib/cpu.js'
import { explain, explainNested, planFigures, rolledBack, scalar, settleDown } from '../lib/pg.js'
import { schemaName } from '../lib/sizes.js'
import { type Summary, sleep, summarize } from '../lib/stats.js'
import type { BenchContext, Measurement, Scenario } from '../lib/types.js'
import { drainGraphile, fillGraphile, graphileErrors, graphilePool } from '../systems/graphile.js'
import { fetchLoop, fillBoss, openBoss } from '../systems/pgboss.js'
import { drainAll, fillSluice, openSluice } from '../systems/sluice.js'
import { BATCH, GRAPHILE_CONFIGS } from './processing.js'

const JOBS = { quick: 10_000, full: 100_000 } as const
const GRAPHILE_BATCHED = GRAPHILE_CONFIGS.find((c) => c.id === 'processing.graphile.batched')!

/**
 * A REPEATABLE READ transaction on the bench database that has taken its snapshot: while it is
 * open, no row version deleted or updated after it can be removed, by VACUUM or by pruning.
 */
async function holdSnapshot(url: string): Promise<{ xmin: string; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
  await client.query('SELECT 1')
  const { rows } = await client.query<{ xmin: string | null }>(
    'SELECT backend_xmin::text AS xmin FROM pg_stat_activity WHERE pid = pg_backend_pid()',
  )
  const xmin = rows[0]?.xmin
  if (!xmin) throw new Error('the held transaction has no xmin')
  return {
    xmin,
    async release() {
      await client.query('COMMIT')
      await client.end()
    },
  }
}

interface HeldRun {
  jobs: number
  ms: number
  claim: Summary
  use: CpuUse
  /** Dead row versions in the system's job table when the run ended. */
  deadTuples: number
  /** EXPLAIN (ANALYZE, BUFFERS) of a claim taken when 90 % of the jobs had run. */
  plan?: { executionMs: number; buffers: number; text: string; nested: string }
}

type System = 'sluice' | 'graphile-worker' | 'pg-boss'

/**
 * Dead row versions in `table` (all its partitions), counted by pgstattuple, which reads the
 * table itself rather than the statistics a backend reports when it gets round to it.
 */
async function deadTuples(ctx: BenchContext, table: string): Promise<number> {
  await ctx.admin.query('CREATE EXTENSION IF NOT EXISTS pgstattuple')
  return scalar(
    ctx.admin,
    `SELECT coalesce(sum((pgstattuple(c.oid)).dead_tuple_count), 0)::bigint FROM pg_class c
WHERE c.relkind = 'r' AND (c.oid = $1::regclass OR c.oid IN (SELECT relid FROM pg_partition_tree($1::regclass) WHERE isleaf))`,
    [table],
  )
}

/**
 * Runs `fn` between CPU snapshots, with a held snapshot around it when `held`, and counts the
 * dead tuples of `table` once it is done, before the held snapshot is let go.
 */
async function around<T>(
  ctx: BenchContext,
  held: boolean,
  table: string,
  fn: () => Promise<T>,
): Promise<{ result: T; ms: number; use: CpuUse; dead: number }> {
  const snapshot = held ? await holdSnapshot(ctx.url) : undefined
  try {
    const before = await cpuSnapshot(ctx.admin)
    const t = performance.now()
    const result = await fn()
    const ms = performance.now() - t
    const use = await cpuSince(ctx.admin, before)
    return { result, ms, use, dead: await deadTuples(ctx, table) }
  } finally {
    await snapshot?.release()
  }
}

async function sluiceRun(ctx: BenchContext, n: number, held: boolean): Promise<HeldRun> {
  const schema = schemaName('sluice_xmin')
  const b = await openSluice(ctx.url, schema)
  try {
    await fillSluice(b, n)
    await settleDown(ctx.admin, schema)
    b.log.reset()
    let plan: HeldRun['plan']
    // Near the end of the run, the claim statement the drain last sent, explained in a
    // rolled-back transaction beside it (the rows it locks are skipped by the drain meanwhile).
    let draining = true
    const probe = async (): Promise<void> => {
      while (draining && b.handled.count < n * 0.9) await sleep(2)
      if (!draining) return
      const last = [...b.log.events].reverse().find((e) => /claim/.test(b.kindOf(e)))
      if (!last) return
      const top = await rolledBack(ctx.admin, (c) => explain(c, last.text, last.values))
      const nested = await rolledBack(ctx.admin, (c) => explainNested(c, last.text, last.values))
      plan = { ...planFigures(top), text: top, nested }
    }
    const { ms, use, dead } = await around(ctx, held, `"${schema}".jobs`, async () => {
      const probing = probe()
      try {
        await drainAll(b)
      } finally {
        draining = false
      }
      await probing
    })
    if (b.handled.count !== n) throw new Error(`sluice: ran ${b.handled.count} jobs, expected ${n}`)
    const claims = b.log.events.filter((e) => /claim/.test(b.kindOf(e))).map((e) => e.durationMs)
    return {
      jobs: n,
      ms,
      claim: summarize(claims),
      use,
      deadTuples: dead,
      ...(plan ? { plan } : {}),
    }
  } finally {
    await b.close()
  }
}

async function graphileRun(ctx: BenchContext, n: number, held: boolean): Promise<HeldRun> {
  const schema = schemaName('gw_xmin')
  await fillGraphile(ctx.url, schema, n, 5000)
  await settleDown(ctx.admin, schema)
  const claims: number[] = []
  const gwPool = graphilePool(ctx.url, 10, (ms) => claims.push(ms))
  try {
    const { result, ms, use, dead } = await around(ctx, held, `"${schema}"._private_jobs`, () =>
      drainGraphile(gwPool, schema, GRAPHILE_BATCHED.config),
    )
    if (result !== n) throw new Error(`graphile-worker: ran ${result} jobs, expected ${n}`)
    const left = await scalar(ctx.admin, `SELECT count(*) FROM "${schema}"._private_jobs`)
    if (left !== 0) throw new Error(`graphile-worker left ${left} jobs; ${graphileErrors.join('; ')}`)
    return {
      jobs: n,
      ms,
      claim: summarize(claims),
      use,
      deadTuples: dead,
    }
  } finally {
    await gwPool.end()
  }
}

async function bossRun(ctx: BenchContext, n: number, held: boolean): Promise<HeldRun> {
  const schema = schemaName('boss_xmin')
  const boss = await openBoss(ctx.url, schema)
  try {
    await fillBoss(boss, n, 5000)
    await settleDown(ctx.admin, schema)
    const claims: number[] = []
    const { result, ms, use, dead } = await around(ctx, held, `"${schema}".job`, () =>
      fetchLoop(boss, BATCH, 1, 600_000, (t) => claims.push(t)),
    )
    if (result !== n) throw new Error(`pg-boss: ran ${result} jobs, expected ${n}`)
    const done = await scalar(ctx.admin, `SELECT count(*) FROM "${schema}".job WHERE state = 'completed'`)
    if (done !== n) throw new Error(`pg-boss: ${done} of ${n} completed`)
    return { jobs: n, ms, claim: summarize(claims), use, deadTuples: dead }
  } finally {
    await boss.stop({ graceful: false })
  }
}

const rate = (r: HeldRun): number => Math.round((r.jobs / r.ms) * 1000)

function rows(
  system: System,
  key: string,
  label: string,
  without: HeldRun,
  withHeld: HeldRun,
): Measurement[] {
  const one = (r: HeldRun, held: boolean): Measurement => ({
    id: `held.${key}.${held ? 'with' : 'without'}`,
    scenario: 'held-xmin',
    system,
    label: `${label}, ${held ? 'with a REPEATABLE READ snapshot held' : 'nothing held'}`,
    value: rate(r),
    unit: 'jobs/s',
    display: `${rate(r).toLocaleString('en-US')} jobs/s · claim p50 ${r.claim.p50.toFixed(2)} ms p99 ${r.claim.p99.toFixed(2)} ms · ${r.deadTuples.toLocaleString('en-US')} dead tuples${
      r.plan ? ` · claim near the end: ${r.plan.executionMs.toFixed(2)} ms, ${r.plan.buffers} buffers` : ''
    }`,
    cost: {
      serverUs: r.use.serverMs === null ? null : Math.round((r.use.serverMs * 1000) / r.jobs),
      clientUs: Math.round((r.use.clientMs * 1000) / r.jobs),
      walBytes: Math.round(r.use.walBytes / r.jobs),
    },
    details: {
      ...r,
      plan: r.plan ? { executionMs: r.plan.executionMs, buffers: r.plan.buffers } : undefined,
    },
  })
  const throughput = rate(withHeld) / rate(without)
  const p99 = withHeld.claim.p99 / without.claim.p99
  return [
    one(without, false),
    one(withHeld, true),
    {
      id: `held.${key}.ratio`,
      scenario: 'held-xmin',
      system,
      label: `${label}: held ÷ nothing held`,
      value: throughput,
      unit: '×',
      display: `throughput ${throughput.toFixed(2)}× · claim p99 ${p99.toFixed(2)}×`,
      details: { throughput, claimP99: p99 },
    },
  ]
}

export const heldXmin: Scenario = {
  name: 'held-xmin',
  title: 'Held xmin horizon: a REPEATABLE READ transaction open for the whole run',
  async run(ctx) {
    const n = JOBS[ctx.size]
    const out: Measurement[] = []
    const attachments: Record<string, unknown> = {}
    const systems: { system: System; key: string; label: string; run: typeof sluiceRun }[] = [
      { system: 'sluice', key: 'sluice', label: 'drain() loop, defaults', run: sluiceRun },
      {
        system: 'graphile-worker',
        key: 'graphile',
        label: `runOnce, localQueue.size ${BATCH}, batch delays 0`,
        run: graphileRun,
      },
      {
        system: 'pg-boss',
        key: 'pgboss',
        label: `fetch(batchSize ${BATCH}) + complete(ids) loop`,
        run: bossRun,
      },
    ]
    for (const s of systems) {
      ctx.log(`held xmin: ${s.system}, nothing held`)
      const without = await s.run(ctx, n, false)
      ctx.log(`held xmin: ${s.system}, snapshot held`)
      const withHeld = await s.run(ctx, n, true)
      out.push(...rows(s.system, s.key, s.label, without, withHeld))
      if (without.plan && withHeld.plan)
        attachments[`${s.key}.claimPlans`] = { without: without.plan, held: withHeld.plan }
    }
    return {
      measurements: out,
      attachments,
      notes: [
        `N = ${n} per run, each on a fresh schema after VACUUM ANALYZE + CHECKPOINT; the held run opens BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1 on the bench database just before the clock starts and commits after it stops (load average ${loadavg()
          .map((x) => x.toFixed(1))
          .join(', ')}).`,
        'Claim = the statement that takes jobs, timed by the client (Sluice: onQuery; graphile-worker: its SKIP LOCKED statement; pg-boss: fetch()). Dead tuples: pgstattuple of the job table (all its partitions) when the run ends, before the held snapshot is let go.',
        'Claim near the end: EXPLAIN (ANALYZE, BUFFERS) of the drain’s last claim once 90 % of the jobs had run, in a rolled-back transaction; execution time and buffers touched (nested plans in the JSON).',
      ],
    }
  },
}
