import { loadavg } from 'node:os'
import { neon, neonConfig } from '@neondatabase/serverless'
import { fromNeonHttp, fromNeonPool } from '../../src/index.js'
import { configureNeonHttpForLocal, startNeonHttpServer } from '../../test/support/neon-http-server.js'
import { localNeonPool, startWsProxy } from '../../test/support/ws-proxy.js'
import { metered } from '../lib/cpu.js'
import { measureDelay, startDelayProxy } from '../lib/delay-proxy.js'
import { settleDown } from '../lib/pg.js'
import { schemaName } from '../lib/sizes.js'
import { summarize } from '../lib/stats.js'
import type { BenchContext, Measurement, Scenario } from '../lib/types.js'
import { type BenchSluice, drainAll, fillSluice, openSluice } from '../systems/sluice.js'
import {
  bossThrough,
  DELAYS,
  graphileThrough,
  NETWORK_JOBS,
  type NetworkRun,
  SINGLE_SAMPLES,
  type SingleRun,
  singleJob,
  sluiceThrough,
} from './network-runs.js'

export const networkId = (key: string, delayMs: number): string => `network.${key}.${delayMs}`
export const singleId = (key: string, delayMs: number): string => `network.single.${key}.${delayMs}`

const two = (x: number): string => x.toFixed(2)

/** Every run of the scenario: drains through the proxy at each delay, and single-job invocations. */
export async function networkRuns(
  ctx: BenchContext,
  { singles: withSingles = true }: { singles?: boolean } = {},
): Promise<{ runs: NetworkRun[]; singles: SingleRun[] }> {
  const n = NETWORK_JOBS[ctx.size]
  const runs: NetworkRun[] = []
  const singles: SingleRun[] = []
  for (const [index, delayMs] of DELAYS.entries()) {
    const proxy = await startDelayProxy(ctx.url, delayMs)
    try {
      // The proxy's first round trips run its code cold: one measurement is thrown away.
      await measureDelay(proxy, ctx.url, 20)
      const drains: [string, () => Promise<NetworkRun>][] = [
        ['sluice', () => sluiceThrough(ctx, proxy, n)],
        ['graphile-worker', () => graphileThrough(ctx, proxy, n)],
        ['pg-boss fetch', () => bossThrough(ctx, proxy, n, 'fetch')],
        ['pg-boss work', () => bossThrough(ctx, proxy, n, 'work')],
      ]
      // A different system goes first at each delay, so none always runs on a fresh proxy.
      const order = [...drains.slice(index % drains.length), ...drains.slice(0, index % drains.length)]
      const done: NetworkRun[] = []
      for (const [name, drain] of order) {
        ctx.log(`network ${delayMs} ms: ${name}`)
        done.push(await drain())
      }
      runs.push(...drains.map(([name]) => done[order.findIndex(([o]) => o === name)]!))
      if (withSingles) {
        ctx.log(`network ${delayMs} ms: single-job invocations`)
        singles.push(...(await singleJob(ctx, proxy, SINGLE_SAMPLES[ctx.size])))
      }
    } finally {
      await proxy.close()
    }
  }
  return { runs, singles }
}

function runMeasurement(run: NetworkRun, sluice: NetworkRun | undefined): Measurement {
  const rate = Math.round((run.jobs / run.ms) * 1000)
  const roundTrips = run.proxy.bursts / run.jobs
  // Statements in flight ÷ wall time: Sluice's from its onQuery hook, every system's from the proxy.
  const hookShare = run.hook ? run.hook.ms / run.ms : undefined
  const proxyShare = run.proxy.busyMs / run.ms
  const m: Measurement = {
    id: networkId(run.key, run.delayMs),
    scenario: 'network',
    system: run.system,
    label: `${run.label}; RTT +${run.delayMs} ms (measured +${two(run.delay.addedMs)} ms)`,
    value: rate,
    unit: 'jobs/s',
    display: `${rate.toLocaleString('en-US')} jobs/s · ${two(roundTrips * 1000)} RT/1k jobs · ${two((run.proxy.statements / run.jobs) * 1000)} stmt/1k jobs · in flight ${two(proxyShare)}${hookShare === undefined ? '' : ` (hook ${two(hookShare)})`}`,
    cost: run.cost,
    details: { run, roundTripsPerJob: roundTrips, inFlightShare: proxyShare, hookShare },
  }
  if (sluice && run.key !== 'sluice') {
    const s = Math.round((sluice.jobs / sluice.ms) * 1000)
    m.ratio = { of: networkId('sluice', run.delayMs), value: s / rate }
  }
  return m
}

function singleMeasurement(run: SingleRun, sluice: SingleRun | undefined): Measurement {
  const cold = summarize(run.coldMs)
  const warm = summarize(run.warmMs)
  const versus = sluice && run.key !== 'sluice' ? summarize(sluice.coldMs).p50 / cold.p50 : undefined
  return {
    id: singleId(run.key, run.delayMs),
    scenario: 'network',
    system: run.system,
    label: `one job, ${run.label}, fresh client; RTT +${run.delayMs} ms`,
    value: cold.p50,
    unit: 'ms',
    display: `cold p50 ${two(cold.p50)} ms (${two(run.roundTrips)} RT, ${two(run.statements)} stmt) · warm p50 ${two(warm.p50)} ms${
      versus === undefined ? '' : ` · Sluice ÷ this ${two(versus)}×`
    }`,
    details: { cold, warm, roundTrips: run.roundTrips, statements: run.statements, delayMs: run.delayMs },
  }
}

/** Drains N jobs through one of the Neon driver's transports, against the local endpoints the tests use. */
async function neonDrain(ctx: BenchContext, transport: 'ws' | 'http'): Promise<Measurement> {
  const n = NETWORK_JOBS[ctx.size]
  const schema = schemaName(`sluice_neon_${transport}`)
  const direct = await openSluice(ctx.url, schema)
  await fillSluice(direct, n)
  await direct.close()
  await settleDown(ctx.admin, schema)
  const server = new URL(ctx.url)
  let b: BenchSluice | undefined
  const closers: (() => Promise<void>)[] = []
  try {
    if (transport === 'ws') {
      const proxy = await startWsProxy({ host: server.hostname, port: Number(server.port || 5432) })
      closers.push(() => proxy.close())
      const wsPool = localNeonPool({ connectionString: ctx.url, max: 10 }, proxy.port)
      closers.unshift(() => wsPool.end())
      b = await openSluice(fromNeonPool(wsPool), schema, {}, undefined, { migrate: false })
    } else {
      const endpoint = await startNeonHttpServer({ connectionString: ctx.url })
      closers.push(() => endpoint.close())
      configureNeonHttpForLocal(neonConfig, endpoint.port)
      // The driver wants a user, host and database in its URL; the local endpoint uses its own.
      b = await openSluice(
        fromNeonHttp(neon('postgres://sluice:sluice@localhost:5432/sluice')),
        schema,
        {},
        undefined,
        {
          migrate: false,
        },
      )
    }
    const sluice = b
    const { ms, cost } = await metered(ctx.admin, n, () => drainAll(sluice))
    if (sluice.handled.count !== n) throw new Error(`neon-${transport}: ran ${sluice.handled.count} of ${n}`)
    const rate = Math.round((n / ms) * 1000)
    return {
      id: `network.neon-${transport}`,
      scenario: 'network',
      system: 'sluice',
      label:
        transport === 'ws'
          ? 'drain() loop over the Neon driver’s WebSocket Pool (local WebSocket→TCP proxy)'
          : 'drain() loop over the Neon driver’s HTTP transport, neon() (local SQL-over-HTTP endpoint)',
      value: rate,
      unit: 'jobs/s',
      display: `${rate.toLocaleString('en-US')} jobs/s · ${two((sluice.log.count / n) * 1000)} stmt/1k jobs`,
      cost,
      details: { jobs: n, ms: Math.round(ms), statements: sluice.log.count, loadavg: loadavg() },
    }
  } finally {
    await b?.close()
    for (const close of closers) await close()
  }
}

export const network: Scenario = {
  name: 'network',
  title:
    'Over a network: a loopback proxy adding 0, 1, 5 and 20 ms of round trip between each system and PostgreSQL',
  async run(ctx) {
    const { runs, singles } = await networkRuns(ctx)
    const out: Measurement[] = []
    for (const delayMs of DELAYS) {
      const sluice = runs.find((r) => r.key === 'sluice' && r.delayMs === delayMs)
      for (const r of runs.filter((x) => x.delayMs === delayMs)) out.push(runMeasurement(r, sluice))
      const one = singles.find((r) => r.key === 'sluice' && r.delayMs === delayMs)
      for (const r of singles.filter((x) => x.delayMs === delayMs)) out.push(singleMeasurement(r, one))
    }
    for (const transport of ['ws', 'http'] as const) {
      ctx.log(`neon ${transport}`)
      out.push(await neonDrain(ctx, transport))
    }
    const n = NETWORK_JOBS[ctx.size]
    return {
      measurements: out,
      notes: [
        `N = ${n} per run; each system drains its own fresh schema through the proxy (a child process: half the delay each way, released by an hrtime check; measured = median SELECT 1 through the proxy − straight to the server).`,
        'RT/1k jobs = client→server bursts at the proxy per 1,000 jobs; stmt/1k jobs = Query + Sync messages per 1,000 jobs; in flight = time with a request outstanding at the proxy (summed over connections) ÷ wall time; hook = the sum of Sluice’s statement durations from onQuery ÷ wall time.',
        `Single job: ${SINGLE_SAMPLES[ctx.size]} invocations each, every one on a fresh client (new pool, connection set-up included: what a cold function pays); warm = the same client reused.`,
        'Neon rows: no added delay; the HTTP transport costs one request per statement, the WebSocket one round trip per statement like TCP.',
      ],
    }
  },
}
