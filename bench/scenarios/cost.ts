import type { Measurement, Scenario } from '../lib/types.js'
import { networkRuns } from './network.js'
import type { NetworkRun } from './network-runs.js'

const MILLION = 1_000_000

const compact = (x: number): string =>
  x >= 10_000 ? Math.round(x).toLocaleString('en-US') : x >= 10 ? x.toFixed(0) : x.toFixed(2)

const bytes = (x: number): string =>
  x >= 1e9 ? `${(x / 1e9).toFixed(2)} GB` : x >= 1e6 ? `${(x / 1e6).toFixed(1)} MB` : `${Math.round(x)} B`

/** One row: a network run's counts scaled to a million jobs. */
function perMillion(run: NetworkRun): Measurement {
  const scale = MILLION / run.jobs
  const statements = run.proxy.statements * scale
  const roundTrips = run.proxy.bursts * scale
  const busySeconds = (run.busyMs / 1000) * scale
  const cpuSeconds = run.cost.serverUs === null ? null : (run.cost.serverUs * MILLION) / 1e6
  const wal = run.cost.walBytes * MILLION
  return {
    id: `cost.${run.key}.${run.delayMs}`,
    scenario: 'cost',
    system: run.system,
    label: `${run.label}; RTT +${run.delayMs} ms (measured +${run.delay.addedMs.toFixed(2)} ms)`,
    value: busySeconds,
    unit: 'busy-s per 10^6 jobs',
    display: `${compact(statements)} stmt · ${compact(roundTrips)} RT · ${compact(busySeconds)} busy-s · ${
      cpuSeconds === null ? '?' : compact(cpuSeconds)
    } DB CPU-s · ${bytes(wal)} WAL`,
    details: {
      statements,
      roundTrips,
      busySeconds,
      cpuSeconds,
      walBytes: wal,
      jobs: run.jobs,
      loadavg: run.loadavg,
    },
  }
}

export const cost: Scenario = {
  name: 'cost',
  title: 'Cost per million jobs, per system and network delay (scaled from the network scenario’s drains)',
  async run(ctx) {
    // The network scenario's runs when it ran earlier in this run; its drains otherwise.
    const earlier = ctx.earlier
      .filter((m) => m.scenario === 'network')
      .map((m) => (m.details as { run?: NetworkRun } | undefined)?.run)
      .filter((r): r is NetworkRun => r !== undefined)
    const runs = earlier.length > 0 ? earlier : (await networkRuns(ctx, { singles: false })).runs
    return {
      measurements: runs.map(perMillion),
      notes: [
        'Per 10^6 jobs, from one drain-to-empty run each: statements (Query + Sync messages at the proxy), round trips (client→server bursts at the proxy), busy-s = wall time the worker code ran (Sluice: the sum of its drain() invocations, what a function is billed for; the peers: their loop), DB CPU-s = CPU of the server backends (bench/lib/cpu.ts), WAL written.',
        'Scaled linearly from the run’s N; wall-time figures move with the machine’s load, CPU and WAL much less.',
      ],
    }
  },
}
