import { loadavg } from 'node:os'
import { metered } from '../lib/cpu.js'
import { schemaName, sizes } from '../lib/sizes.js'
import type { Measurement, Scenario } from '../lib/types.js'
import { addJobsLoop, graphilePool, graphileUtils } from '../systems/graphile.js'
import { fillBoss, openBoss } from '../systems/pgboss.js'
import { fillSluice, openSluice } from '../systems/sluice.js'

export const SLUICE_BULK = 'enqueue.sluice.enqueueMany'

export const enqueue: Scenario = {
  name: 'enqueue',
  title: 'Bulk enqueue: N jobs in batches, one client, one call at a time',
  async run(ctx) {
    const { enqueueJobs: n, enqueueSlice: slice } = sizes(ctx.size)
    const rate = (ms: number): number => Math.round((n / ms) * 1000)
    const out: Measurement[] = []

    ctx.log(`sluice enqueueMany: ${n} jobs in slices of ${slice}`)
    const b = await openSluice(ctx.url, schemaName('sluice_enq'))
    let sluice: Measurement
    try {
      // The pool's connection is open (migrate used it) before the meter starts.
      const { ms, cost } = await metered(ctx.admin, n, () => fillSluice(b, n, slice))
      sluice = {
        id: SLUICE_BULK,
        scenario: 'enqueue',
        system: 'sluice',
        label: `enqueueMany, ${slice} per call`,
        value: rate(ms),
        unit: 'jobs/s',
        cost,
        details: { jobs: n, ms: Math.round(ms), loadavg: loadavg(), statements: b.log.count },
      }
      out.push(sluice)
    } finally {
      await b.close()
    }

    ctx.log('graphile-worker addJobs')
    const gwPool = graphilePool(ctx.url, 10)
    try {
      const utils = await graphileUtils(gwPool, schemaName('gw_enq'))
      const { ms, cost } = await metered(ctx.admin, n, () => addJobsLoop(utils, n, slice))
      await utils.release()
      out.push({
        id: 'enqueue.graphile.addJobs',
        scenario: 'enqueue',
        system: 'graphile-worker',
        label: `WorkerUtils.addJobs, ${slice} per call`,
        value: rate(ms),
        unit: 'jobs/s',
        cost,
        ratio: { of: SLUICE_BULK, value: sluice.value / rate(ms) },
        details: { jobs: n, ms: Math.round(ms), loadavg: loadavg() },
      })
    } finally {
      await gwPool.end()
    }

    ctx.log('pg-boss insert')
    const boss = await openBoss(ctx.url, schemaName('boss_enq'))
    try {
      const { ms, cost } = await metered(ctx.admin, n, () => fillBoss(boss, n, slice))
      out.push({
        id: 'enqueue.pgboss.insert',
        scenario: 'enqueue',
        system: 'pg-boss',
        label: `insert, ${slice} per call`,
        value: rate(ms),
        unit: 'jobs/s',
        cost,
        ratio: { of: SLUICE_BULK, value: sluice.value / rate(ms) },
        details: { jobs: n, ms: Math.round(ms), loadavg: loadavg() },
      })
    } finally {
      await boss.stop({ graceful: false })
    }
    return {
      measurements: out,
      notes: [
        `N = ${n}; every system on a fresh schema with its own migrations applied; Sluice validates every input with zod.`,
      ],
    }
  },
}
