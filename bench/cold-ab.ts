/**
 * A/B of what a cold function pays its database: the first claim of a fresh connection (as a
 * drain sends it when it claims once at most: with the outbox relay, without the durations read)
 * taking one waiting job, then the settle that completes it and ends the invocation; another
 * revision's src/ against the working tree's, connection after connection, alternating sides so
 * that drift on a busy machine lands on both alike. Each sample runs in a transaction that is
 * rolled back, so the same job waits for the next one.
 *
 *   DATABASE_URL=… npx tsx bench/cold-ab.ts <git-rev> [--samples 40]
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { z } from 'zod'
import type * as sql from '../src/sql/index.js'
import { firstClaim } from './lib/first-claim.js'
import { revisionDir } from './lib/revision.js'
import { percentile } from './lib/stats.js'
import type { SluiceLibrary } from './systems/sluice.js'

const { values, positionals } = parseArgs({
  options: { samples: { type: 'string', default: '40' } },
  allowPositionals: true,
})
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const rev = positionals[0]
if (!rev) throw new Error('usage: bench/cold-ab.ts <git-rev> [--samples 40]')
const samples = Number(values.samples)

interface Side {
  label: string
  t: string
  schema: string
  sql: Pick<typeof sql, 'claim' | 'settle'>
  claimMs: number[]
  settleMs: number[]
}

async function open(label: string, dir: string, key: string): Promise<Side> {
  const lib = (await import(pathToFileURL(join(dir, 'src', 'index.ts')).href)) as SluiceLibrary
  const builders = (await import(pathToFileURL(join(dir, 'src', 'sql', 'index.ts')).href)) as typeof sql
  const schema = `cold_ab_${key}_${Date.now().toString(36)}`
  const job = lib.defineJob({ name: 'noop', input: z.object({}), run: () => {} })
  const sluice = lib.createSluice({ database: url as string, schema, jobs: [job], env: {} })
  await sluice.migrate()
  await sluice.enqueue(job, {})
  await sluice.close()
  return { label, t: `"${schema}"`, schema, sql: builders, claimMs: [], settleMs: [] }
}

async function sample(side: Side, i: number): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query('BEGIN')
    const invocationId = `drn_cold_ab_${i}`
    const claim = side.sql.claim(side.t, firstClaim(invocationId, 100))
    let at = performance.now()
    const claimed = await client.query(claim.text, claim.values as unknown[])
    side.claimMs.push(performance.now() - at)
    const row = claimed.rows.find((r: { id: string | null }) => r.id !== null) as
      | { id: string; token: string }
      | undefined
    if (!row) throw new Error(`${side.label}: the claim took no job`)
    const settle = side.sql.settle(side.t, {
      completions: [{ id: row.id, token: row.token, status: 'completed', durationMs: 1, waitMs: 1 }],
      failures: [],
      handBacks: [],
      finish: { invocationId, queues: ['default'] },
    })
    at = performance.now()
    await client.query(settle.text, settle.values as unknown[])
    side.settleMs.push(performance.now() - at)
  } finally {
    await client.query('ROLLBACK').catch(() => {})
    await client.end()
  }
}

const base = revisionDir(rev)
const sides = [
  await open(base.sha, base.dir, 'a'),
  await open('working tree', join(import.meta.dirname, '..'), 'b'),
]
for (let i = 0; i < samples; i++) {
  for (const side of i % 2 === 0 ? sides : [...sides].reverse()) await sample(side, i)
}
const admin = new pg.Client({ connectionString: url })
await admin.connect()
for (const side of sides) await admin.query(`DROP SCHEMA ${side.t} CASCADE`)
await admin.end()
console.log(`${samples} fresh connections per side, alternating`)
console.log('side\trev\tfirst claim p50 ms\tsettle + finish p50 ms')
for (const [i, side] of sides.entries()) {
  console.log(
    `${'AB'[i]}\t${side.label}\t${percentile(side.claimMs, 50).toFixed(2)}\t${percentile(side.settleMs, 50).toFixed(2)}`,
  )
}
