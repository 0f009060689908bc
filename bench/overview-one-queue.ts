/**
 * The dashboard overview (inspect.overview()) when one queue holds the whole backlog, as an app
 * with a single `default` queue has it: seeds `--jobs` due jobs into one queue of a fresh schema,
 * VACUUM ANALYZE, then times the overview statement as the dashboard sends it (wall time on one
 * connection, the server's own settings, JIT included) beside `inspect.queues()`'s full count.
 *
 *   DATABASE_URL=… npx tsx bench/overview-one-queue.ts [--jobs 1000000] [--runs 5]
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import * as z from 'zod'
import { createSluice, defineJob } from '../src/index.js'
import { queueMetrics } from '../src/sql/metrics.js'
import { OVERVIEW_LIMITS, overview } from '../src/sql/overview.js'
import { percentile } from './lib/stats.js'

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '5' } },
})
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const schema = `overview_one_${Date.now().toString(36)}`
const t = `"${schema}"`
const noop = defineJob({ name: 'noop', input: z.object({}), run: () => {} })
const sluice = createSluice({ database: url, schema, jobs: [noop] })
await sluice.migrate()
await sluice.close()
const client = new pg.Client({ connectionString: url })
await client.connect()
try {
  await client.query(
    `INSERT INTO ${t}.jobs (queue, name, payload) SELECT 'default', 'noop', '{}' FROM generate_series(1, $1::int)`,
    [Number(values.jobs)],
  )
  await client.query(`VACUUM ANALYZE ${t}.jobs`)
  const timed = async (statement: { text: string; values: readonly unknown[] }): Promise<number> => {
    const at = performance.now()
    await client.query(statement.text, [...statement.values])
    return performance.now() - at
  }
  const overviewMs: number[] = []
  const queuesMs: number[] = []
  for (let i = 0; i < Number(values.runs); i++) {
    overviewMs.push(await timed(overview(t, schema, ['default'], OVERVIEW_LIMITS)))
    queuesMs.push(await timed(queueMetrics(t, ['default'])))
  }
  const { rows } = await client.query<{ jit: string }>(`SELECT current_setting('jit') AS jit`)
  const p50 = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    ).toFixed(1)
  console.log(
    `${values.jobs} jobs in one queue, jit=${rows[0]!.jit}, ${values.runs} runs: overview p50 ${p50(overviewMs)} ms ` +
      `(max ${Math.max(...overviewMs).toFixed(1)}), inspect.queues() p50 ${p50(queuesMs)} ms`,
  )
} finally {
  await client.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
  await client.end()
}
