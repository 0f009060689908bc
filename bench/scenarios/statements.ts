import { schemaName } from '../lib/sizes.js'
import type { Measurement, Scenario } from '../lib/types.js'
import { type BenchSluice, fillSluice, JOB, openSluice, payload } from '../systems/sluice.js'

const BATCHES = 4
const ENQUEUES = 20

/** Statements one drain call sends to drain `jobs` jobs (defaults: batch 50), by kind. */
async function drainStatements(
  b: BenchSluice,
  jobs: number,
): Promise<{ total: number; kinds: Record<string, number> }> {
  if (jobs > 0) await fillSluice(b, jobs)
  b.log.reset()
  const summary = await b.sluice.drain()
  if (summary.completed !== jobs) throw new Error(`drained ${summary.completed} jobs, expected ${jobs}`)
  const kinds: Record<string, number> = {}
  for (const e of b.log.events) kinds[b.kindOf(e)] = (kinds[b.kindOf(e)] ?? 0) + 1
  return { total: b.log.count, kinds }
}

export const statements: Scenario = {
  name: 'statements',
  title: "Statements per operation, counted through Sluice's onQuery hook",
  async run(ctx) {
    const b = await openSluice(ctx.url, schemaName('sluice_stmt'))
    const batch = b.sluice.config.drain.batchSize
    try {
      b.log.reset()
      for (let i = 0; i < ENQUEUES; i++) await b.sluice.enqueue(JOB, payload(i))
      const perEnqueue = b.log.count / ENQUEUES

      b.log.reset()
      await b.sluice.enqueueMany(
        JOB,
        Array.from({ length: 1000 }, (_, i) => payload(i)),
      )
      const perMany = b.log.count
      // Leave the queue empty before counting drains.
      await b.sluice.drain()

      const empty = await drainStatements(b, 0)
      const full = await drainStatements(b, BATCHES * batch)
      const perBatch = (full.total - empty.total) / BATCHES
      const out: Measurement[] = [
        {
          id: 'statements.enqueue',
          scenario: 'statements',
          system: 'sluice',
          label: `enqueue() (mean of ${ENQUEUES} calls)`,
          value: perEnqueue,
          unit: 'statements',
        },
        {
          id: 'statements.enqueueMany',
          scenario: 'statements',
          system: 'sluice',
          label: 'enqueueMany() of 1,000 jobs',
          value: perMany,
          unit: 'statements',
        },
        {
          id: 'statements.batch',
          scenario: 'statements',
          system: 'sluice',
          label: `a drained batch of ${batch} jobs`,
          value: perBatch,
          unit: 'statements',
          details: { drainOf: BATCHES * batch, statements: full.total, kinds: full.kinds },
        },
        {
          id: 'statements.drain-fixed',
          scenario: 'statements',
          system: 'sluice',
          label: 'a drain call on an empty queue (fixed overhead per invocation)',
          value: empty.total,
          unit: 'statements',
          details: { kinds: empty.kinds },
        },
        {
          id: 'statements.per-job',
          scenario: 'statements',
          system: 'sluice',
          label: `per job, draining ${BATCHES * batch} jobs in one call`,
          value: full.total / (BATCHES * batch),
          unit: 'statements',
        },
      ]
      return {
        measurements: out,
        notes: [
          `Drain of ${BATCHES} full batches: ${full.total} statements (${Object.entries(full.kinds)
            .map(([k, v]) => `${v} ${k}`)
            .join(
              ', ',
            )}); the empty drain is one claim that finds nothing and the settle that ends the invocation.`,
        ],
      }
    } finally {
      await b.close()
    }
  },
}
