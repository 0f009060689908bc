/**
 * Whether a claim costs the same near the end of a drain as at its start: the buffers a claim of
 * `--batch` jobs touches on a queue of `--jobs` no-op jobs, when they are all due, once a drain
 * has run 90 % of them, and again after a VACUUM of the jobs table. Each figure is the median of
 * `--probes` EXPLAIN (ANALYZE, BUFFERS) runs in rolled-back transactions, of the whole claim and
 * of its walk alone (`claim_open`, which finds the jobs; the rest of the claim is the lease, an
 * update of each job). A drain of a few seconds ends before autovacuum's next round, so what the
 * claims left behind is all still there at 90 %: that is the case this measures.
 *
 *   DATABASE_URL=… npx tsx bench/claim-walk.ts [--jobs 100000] [--batch 200] [--probes 5]
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { z } from 'zod'
import { createSluice, defineJob } from '../src/index.js'
import { claim } from '../src/sql/index.js'
import { explain, planFigures, rolledBack } from './lib/pg.js'
import { percentile } from './lib/stats.js'

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '200' },
    probes: { type: 'string', default: '5' },
  },
})
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const jobs = Number(values.jobs)
const batch = Number(values.batch)
const probes = Number(values.probes)
const schema = `claim_walk_${Date.now().toString(36)}`
const t = `"${schema}"`

const noop = defineJob({ name: 'noop', input: z.object({}), run: () => {} })
const sluice = createSluice({ database: url, schema, jobs: [noop] })
const pool = new pg.Pool({ connectionString: url, max: 1 })

interface Explained {
  ms: number
  buffers: number
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement in a transaction rolled back: its time and buffers. */
async function explained(text: string, values: readonly unknown[] = []): Promise<Explained> {
  const figures = planFigures(await rolledBack(pool, (c) => explain(c, text, values)))
  return { ms: figures.executionMs, buffers: figures.buffers }
}

interface Stage {
  label: string
  claim: Explained
  walk: Explained
  dead: number
}

async function measure(label: string): Promise<Stage> {
  const claims: Explained[] = []
  const walks: Explained[] = []
  for (let i = 0; i < probes; i++) {
    const statement = claim(t, {
      queues: ['default'],
      limit: batch,
      leaseMs: 30_000,
      invocationId: 'claim-walk',
      invocationPriority: 0,
      jobsDone: 0,
    })
    claims.push(await explained(statement.text, statement.values))
    walks.push(
      await explained(
        `SELECT * FROM ${t}.claim_open(ARRAY['default'], 'claim-walk', 0, now() + interval '1 minute', 0, $1, '{}')`,
        [batch],
      ),
    )
  }
  const median = (xs: Explained[]): Explained => ({
    ms: percentile(
      xs.map((x) => x.ms),
      50,
    ),
    buffers: percentile(
      xs.map((x) => x.buffers),
      50,
    ),
  })
  const { rows } = await pool.query<{ dead: string }>(
    `SELECT n_dead_tup AS dead FROM pg_stat_user_tables WHERE relid = '${t}.jobs'::regclass`,
  )
  return { label, claim: median(claims), walk: median(walks), dead: Number(rows[0]?.dead ?? 0) }
}

try {
  await sluice.migrate()
  for (let done = 0; done < jobs; done += 10_000)
    await sluice.enqueueMany(
      noop,
      Array.from({ length: Math.min(10_000, jobs - done) }, () => ({})),
    )
  await pool.query(`VACUUM ANALYZE ${t}.jobs`)
  const stages = [await measure(`${jobs} due`)]
  const target = Math.floor(jobs * 0.9)
  let ran = 0
  while (ran < target) ran += (await sluice.drain({ maxJobs: target - ran, budgetMs: 600_000 })).completed
  stages.push(await measure(`${ran} drained`))
  await pool.query(`VACUUM ${t}.jobs`)
  stages.push(await measure('after VACUUM'))
  console.log(`claim of ${batch} on a queue of ${jobs} jobs, median of ${probes}`)
  console.log('| when | dead tuples | claim buffers | claim ms | walk buffers | walk ms | lease buffers |')
  console.log('| --- | --- | --- | --- | --- | --- | --- |')
  for (const s of stages)
    console.log(
      `| ${s.label} | ${s.dead} | ${s.claim.buffers} | ${s.claim.ms.toFixed(2)} | ${s.walk.buffers} | ${s.walk.ms.toFixed(2)} | ${s.claim.buffers - s.walk.buffers} |`,
    )
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`).catch(() => {})
  await pool.end().catch(() => {})
  await sluice.close()
}
