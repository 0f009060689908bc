import { loadavg } from 'node:os'
import { PgBoss } from 'pg-boss'
import { type CpuSnapshot, cpuSince, cpuSnapshot } from '../lib/cpu.js'
import { type DelayProxy, type MeasuredDelay, measureDelay, type ProxyStats } from '../lib/delay-proxy.js'
import { pool, scalar, settleDown } from '../lib/pg.js'
import { schemaName } from '../lib/sizes.js'
import type { BenchContext, Measurement } from '../lib/types.js'
import { drainGraphile, fillGraphile, graphileErrors, graphilePool } from '../systems/graphile.js'
import { BOSS_QUEUE, fetchLoop, fillBoss, openBoss, workLoop } from '../systems/pgboss.js'
import { type BenchSluice, fillSluice, openSluice } from '../systems/sluice.js'
import { BATCH, GRAPHILE_CONFIGS } from './processing.js'

/** Nominal round-trip delays the proxy adds; 0 is the proxy relaying at once (it still counts). */
export const DELAYS = [0, 1, 5, 20] as const
export const NETWORK_JOBS = { quick: 2_000, full: 20_000 } as const
export const SINGLE_SAMPLES = { quick: 8, full: 30 } as const

/** Everything one drain-to-empty run through the proxy measured. */
export interface NetworkRun {
  system: Measurement['system']
  key: 'sluice' | 'graphile' | 'pgboss-fetch' | 'pgboss-work'
  label: string
  delayMs: number
  delay: MeasuredDelay
  jobs: number
  ms: number
  /** Wall time the worker code was running: the sum of drain invocations for Sluice. */
  busyMs: number
  proxy: ProxyStats
  /** Statements Sluice's onQuery hook saw, and the sum of their durations. */
  hook?: { statements: number; ms: number }
  cost: { serverUs: number | null; clientUs: number; walBytes: number }
  loadavg: number[]
}

const GRAPHILE_BATCHED = GRAPHILE_CONFIGS.find((c) => c.id === 'processing.graphile.batched')!

/** Drains to empty with one drain() loop, timing every invocation (what a function is billed for). */
async function drainTimed(b: BenchSluice): Promise<{ calls: number; busyMs: number }> {
  let calls = 0
  let busyMs = 0
  for (;;) {
    const t = performance.now()
    const summary = await b.sluice.drain()
    busyMs += performance.now() - t
    calls++
    if (summary.stoppedBy === 'empty' && summary.remainingReady === 0) return { calls, busyMs }
  }
}

async function measured<T>(
  ctx: BenchContext,
  proxy: DelayProxy,
  fn: () => Promise<T>,
): Promise<{ result: T; ms: number; proxy: ProxyStats; use: Awaited<ReturnType<typeof cpuSince>> }> {
  await proxy.stats(true)
  const before: CpuSnapshot = await cpuSnapshot(ctx.admin)
  const t = performance.now()
  const result = await fn()
  const ms = performance.now() - t
  const stats = await proxy.stats(true)
  const use = await cpuSince(ctx.admin, before)
  return { result, ms, proxy: stats, use }
}

const perJob = (use: Awaited<ReturnType<typeof cpuSince>>, n: number): NetworkRun['cost'] => ({
  serverUs: use.serverMs === null ? null : Math.round((use.serverMs * 1000) / n),
  clientUs: Math.round((use.clientMs * 1000) / n),
  walBytes: Math.round(use.walBytes / n),
})

function expect(what: string, handled: number, n: number): void {
  if (handled !== n) throw new Error(`${what}: ran ${handled} jobs, expected ${n}`)
}

export async function sluiceThrough(ctx: BenchContext, proxy: DelayProxy, n: number): Promise<NetworkRun> {
  const schema = schemaName('sluice_net')
  const direct = await openSluice(ctx.url, schema)
  await fillSluice(direct, n)
  await direct.close()
  await settleDown(ctx.admin, schema)
  const b = await openSluice(proxy.via(ctx.url), schema)
  try {
    const delay = await measureDelay(proxy, ctx.url)
    b.log.reset()
    b.handled.count = 0
    const run = await measured(ctx, proxy, () => drainTimed(b))
    expect('sluice', b.handled.count, n)
    const left = await scalar(ctx.admin, `SELECT count(*) FROM "${schema}".jobs`)
    if (left !== 0) throw new Error(`sluice left ${left} jobs behind`)
    return {
      system: 'sluice',
      key: 'sluice',
      label: 'drain() loop, defaults',
      delayMs: proxy.rttMs,
      delay,
      jobs: n,
      ms: run.ms,
      busyMs: run.result.busyMs,
      proxy: run.proxy,
      hook: { statements: b.log.count, ms: b.log.events.reduce((a, e) => a + e.durationMs, 0) },
      cost: perJob(run.use, n),
      loadavg: loadavg(),
    }
  } finally {
    await b.close()
  }
}

export async function graphileThrough(ctx: BenchContext, proxy: DelayProxy, n: number): Promise<NetworkRun> {
  const schema = schemaName('gw_net')
  await fillGraphile(ctx.url, schema, n, 5000)
  await settleDown(ctx.admin, schema)
  const gwPool = graphilePool(proxy.via(ctx.url), 10)
  try {
    const delay = await measureDelay(proxy, ctx.url)
    const run = await measured(ctx, proxy, () => drainGraphile(gwPool, schema, GRAPHILE_BATCHED.config))
    expect('graphile-worker', run.result, n)
    const left = await scalar(ctx.admin, `SELECT count(*) FROM "${schema}"._private_jobs`)
    if (left !== 0) throw new Error(`graphile-worker left ${left} jobs behind; ${graphileErrors.join('; ')}`)
    return {
      system: 'graphile-worker',
      key: 'graphile',
      label: `runOnce, concurrentJobs 10, localQueue.size ${BATCH}, batch delays 0`,
      delayMs: proxy.rttMs,
      delay,
      jobs: n,
      ms: run.ms,
      busyMs: run.ms,
      proxy: run.proxy,
      cost: perJob(run.use, n),
      loadavg: loadavg(),
    }
  } finally {
    await gwPool.end()
  }
}

export async function bossThrough(
  ctx: BenchContext,
  proxy: DelayProxy,
  n: number,
  how: 'fetch' | 'work',
): Promise<NetworkRun> {
  const schema = schemaName('boss_net')
  const filler = await openBoss(ctx.url, schema)
  await fillBoss(filler, n, 5000)
  await filler.stop({ graceful: false })
  await settleDown(ctx.admin, schema)
  const boss = await openBoss(proxy.via(ctx.url), schema)
  const counter = pool(ctx.url, 1)
  try {
    const delay = await measureDelay(proxy, ctx.url)
    const run = await measured(ctx, proxy, () =>
      how === 'fetch'
        ? fetchLoop(boss, BATCH, 1, 600_000)
        : workLoop(boss, (sql) => scalar(counter, sql), schema, {
            n,
            batchSize: BATCH,
            workers: 1,
            pollingIntervalSeconds: 0.5,
          }),
    )
    expect(`pg-boss ${how}`, run.result, n)
    const done = await scalar(
      ctx.admin,
      `SELECT count(*) FROM "${schema}".job WHERE name = '${BOSS_QUEUE}' AND state = 'completed'`,
    )
    if (done !== n) throw new Error(`pg-boss ${how}: ${done} of ${n} completed`)
    return {
      system: 'pg-boss',
      key: how === 'fetch' ? 'pgboss-fetch' : 'pgboss-work',
      label:
        how === 'fetch'
          ? `fetch(batchSize ${BATCH}) + complete(ids) loop`
          : `work({ batchSize ${BATCH}, localConcurrency 1, burstWhenBatchFull })`,
      delayMs: proxy.rttMs,
      delay,
      jobs: n,
      ms: run.ms,
      busyMs: run.ms,
      proxy: run.proxy,
      cost: perJob(run.use, n),
      loadavg: loadavg(),
    }
  } finally {
    await boss.stop({ graceful: false })
    await counter.end()
  }
}

/** Latency of one invocation that runs one job, each from a fresh client (a cold function). */
export interface SingleRun {
  key: NetworkRun['key']
  system: Measurement['system']
  label: string
  delayMs: number
  coldMs: number[]
  warmMs: number[]
  /** Round trips and statements per cold invocation, from the proxy. */
  roundTrips: number
  statements: number
}

/** One invocation: it runs a job and hands back how to release what it opened (not timed). */
type Invocation = () => Promise<{ ran: number; release?: () => Promise<void> }>

async function sample(
  count: number,
  proxy: DelayProxy,
  seed: () => Promise<void>,
  invoke: Invocation,
): Promise<{ ms: number[]; roundTrips: number; statements: number }> {
  const ms: number[] = []
  let bursts = 0
  let statements = 0
  for (let i = 0; i < count; i++) {
    await seed()
    await proxy.stats(true)
    const t = performance.now()
    const { ran, release } = await invoke()
    ms.push(performance.now() - t)
    // Counted before the release: a function's pool is left open, not ended, when it answers.
    const s = await proxy.stats(true)
    await release?.()
    bursts += s.bursts
    statements += s.statements
    if (ran !== 1) throw new Error(`a single-job invocation ran ${ran} jobs`)
  }
  return { ms, roundTrips: bursts / count, statements: statements / count }
}

export async function singleJob(ctx: BenchContext, proxy: DelayProxy, count: number): Promise<SingleRun[]> {
  const url = proxy.via(ctx.url)
  const out: SingleRun[] = []

  const sSchema = schemaName('sluice_one')
  const seedSluice = await openSluice(ctx.url, sSchema)
  const seedS = async (): Promise<void> => {
    await seedSluice.sluice.enqueueMany('noop', [{ n: 1 }])
  }
  const cold = await sample(count, proxy, seedS, async () => {
    const b = await openSluiceCold(url, sSchema)
    return { ran: (await b.sluice.drain({ maxJobs: 1 })).completed, release: () => b.close() }
  })
  const warmSluice = await openSluiceCold(url, sSchema)
  await seedS()
  await warmSluice.sluice.drain({ maxJobs: 1 })
  const warm = await sample(count, proxy, seedS, async () => ({
    ran: (await warmSluice.sluice.drain({ maxJobs: 1 })).completed,
  }))
  await warmSluice.close()
  await seedSluice.close()
  out.push({
    key: 'sluice',
    system: 'sluice',
    label: 'drain({ maxJobs: 1 })',
    delayMs: proxy.rttMs,
    coldMs: cold.ms,
    warmMs: warm.ms,
    roundTrips: cold.roundTrips,
    statements: cold.statements,
  })

  const gSchema = schemaName('gw_one')
  await fillGraphile(ctx.url, gSchema, 0, 1)
  const gSeed = graphilePool(ctx.url, 1)
  const seedG = async (): Promise<void> => {
    await gSeed.query(`SELECT "${gSchema}".add_job('noop', '{"n":1}'::json)`)
  }
  const gCold = await sample(count, proxy, seedG, async () => {
    const p = graphilePool(url, 10)
    return { ran: await drainGraphile(p, gSchema, GRAPHILE_BATCHED.config), release: () => p.end() }
  })
  const gWarmPool = graphilePool(url, 10)
  await seedG()
  await drainGraphile(gWarmPool, gSchema, GRAPHILE_BATCHED.config)
  const gWarm = await sample(count, proxy, seedG, async () => ({
    ran: await drainGraphile(gWarmPool, gSchema, GRAPHILE_BATCHED.config),
  }))
  await gWarmPool.end()
  await gSeed.end()
  out.push({
    key: 'graphile',
    system: 'graphile-worker',
    label: 'runOnce (batched configuration)',
    delayMs: proxy.rttMs,
    coldMs: gCold.ms,
    warmMs: gWarm.ms,
    roundTrips: gCold.roundTrips,
    statements: gCold.statements,
  })

  const bSchema = schemaName('boss_one')
  const seedBoss = await openBoss(ctx.url, bSchema)
  const seedB = async (): Promise<void> => {
    await seedBoss.send(BOSS_QUEUE, { n: 1 })
  }
  const fetchOne = async (boss: PgBoss): Promise<number> => {
    const jobs = await boss.fetch(BOSS_QUEUE, { batchSize: 1 })
    if (jobs.length > 0)
      await boss.complete(
        BOSS_QUEUE,
        jobs.map((j) => j.id),
      )
    return jobs.length
  }
  const bCold = await sample(count, proxy, seedB, async () => {
    const boss = new PgBoss({
      connectionString: url,
      schema: bSchema,
      supervise: false,
      schedule: false,
      migrate: false,
    })
    boss.on('error', () => {})
    await boss.start()
    return { ran: await fetchOne(boss), release: () => boss.stop({ graceful: false }) }
  })
  const bWarm = new PgBoss({
    connectionString: url,
    schema: bSchema,
    supervise: false,
    schedule: false,
    migrate: false,
  })
  bWarm.on('error', () => {})
  await bWarm.start()
  await seedB()
  await fetchOne(bWarm)
  const bWarmRuns = await sample(count, proxy, seedB, async () => ({ ran: await fetchOne(bWarm) }))
  await bWarm.stop({ graceful: false })
  await seedBoss.stop({ graceful: false })
  out.push({
    key: 'pgboss-fetch',
    system: 'pg-boss',
    label: 'start() + fetch() + complete()',
    delayMs: proxy.rttMs,
    coldMs: bCold.ms,
    warmMs: bWarmRuns.ms,
    roundTrips: bCold.roundTrips,
    statements: bCold.statements,
  })
  return out
}

/** A Sluice client as a cold function makes one: no migrate(), a new pool, nothing cached. */
async function openSluiceCold(url: string, schema: string): Promise<BenchSluice> {
  return openSluice(url, schema, {}, undefined, { migrate: false })
}
