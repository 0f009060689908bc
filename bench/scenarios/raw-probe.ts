import { loadavg } from 'node:os'
import { metered } from '../lib/cpu.js'
import { pool, settleDown } from '../lib/pg.js'
import { schemaName, sizes } from '../lib/sizes.js'
import type { BenchContext, Measurement, Scenario } from '../lib/types.js'
import { createRaw, fillRaw, rawDelete, rawDeleteArchive, rawLoop } from '../systems/raw.js'
import { BATCH, SLUICE_PARALLEL, SLUICE_SERIAL } from './processing.js'

const PARALLEL = 4

async function probe(
  ctx: BenchContext,
  n: number,
  v: { id: string; label: string; parallel: number; archive: boolean },
): Promise<Measurement> {
  const schema = schemaName('raw')
  await createRaw(ctx.admin, schema, v.archive)
  await fillRaw(ctx.admin, schema, n)
  await settleDown(ctx.admin, schema)
  const p = pool(ctx.url, v.parallel)
  try {
    const statement = v.archive ? rawDeleteArchive(schema) : rawDelete(schema)
    await Promise.all(Array.from({ length: v.parallel }, () => p.query('SELECT 1')))
    const {
      result: handled,
      ms,
      cost,
    } = await metered(ctx.admin, n, () => rawLoop(p, statement, BATCH, v.parallel))
    if (handled !== n) throw new Error(`raw probe ${v.id}: saw ${handled} rows, expected ${n}`)
    return {
      id: v.id,
      scenario: 'raw-probe',
      system: 'raw',
      label: v.label,
      value: Math.round((n / ms) * 1000),
      unit: 'jobs/s',
      cost,
      details: { jobs: n, ms: Math.round(ms), loadavg: loadavg(), batch: BATCH, statement },
    }
  } finally {
    await p.end()
  }
}

export const rawProbe: Scenario = {
  name: 'raw-probe',
  title: 'Raw SQL probe: the cheapest claim-and-delete loop, no framework (the physical limit)',
  async run(ctx) {
    const n = sizes(ctx.size).processingJobs
    const variants = [
      {
        id: 'raw.delete',
        label: `DELETE … WHERE id IN (SELECT … ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) RETURNING, 1 loop`,
        parallel: 1,
        archive: false,
      },
      {
        id: 'raw.delete-x4',
        label: `the same, ${PARALLEL} loops at once`,
        parallel: PARALLEL,
        archive: false,
      },
      {
        id: 'raw.delete-archive',
        label: 'the same DELETE plus INSERT of the rows into a finished table, one statement, 1 loop',
        parallel: 1,
        archive: true,
      },
    ]
    const out: Measurement[] = []
    for (const v of variants) {
      ctx.log(`raw probe: ${v.id}`)
      const m = await probe(ctx, n, v)
      const sluice = ctx.earlier.find((e) => e.id === (v.parallel > 1 ? SLUICE_PARALLEL : SLUICE_SERIAL))
      if (sluice) m.ratio = { of: sluice.id, value: sluice.value / m.value }
      out.push(m)
    }
    return {
      measurements: out,
      notes: [
        `N = ${n}, batch ${BATCH}; a table with the row shape of Sluice's jobs and only a primary key; the loop reads each payload.`,
        'Ratio = Sluice (processing scenario) over the probe: 1 loop against one drain loop, 4 loops against 4 drain loops.',
      ],
    }
  },
}
