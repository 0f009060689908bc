/**
 * What a fresh backend costs the first statements of a drain: for each of `--samples` new
 * connections, the time of `SELECT 1` (the connection's own first statement), then a drain's
 * first claim (with the outbox relay and the durations read, as `drain()` sends it), then its
 * settle; and the same claim again on that connection (warm). Each claim claims nothing (an
 * empty queue), so only the statements' fixed cost is timed: parsing, planning and compiling the
 * functions they call, and filling the backend's catalog caches.
 *
 *   DATABASE_URL=… npx tsx bench/cold-claim.ts [--samples 20]
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { z } from 'zod'
import { createSluice, defineJob } from '../src/index.js'
import { claim, settle } from '../src/sql/index.js'
import { firstClaim } from './lib/first-claim.js'
import { percentile } from './lib/stats.js'

const { values } = parseArgs({ options: { samples: { type: 'string', default: '20' } } })
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const schema = `cold_${Date.now().toString(36)}`
const t = `"${schema}"`
const job = defineJob({ name: 'noop', input: z.object({}), run: () => {} })
const sluice = createSluice({ database: url, schema, jobs: [job] })
await sluice.migrate()
await sluice.close()

const variants = {
  'first claim (relay + durations)': (id: string) =>
    claim(t, firstClaim(id, 100), { names: ['noop'], sinceMs: 3_600_000, sample: 5_000 }),
  'claim + relay': (id: string) => claim(t, firstClaim(id, 100)),
  'claim + durations': (id: string) =>
    claim(t, firstClaim(id), { names: ['noop'], sinceMs: 3_600_000, sample: 5_000 }),
  'claim alone': (id: string) => claim(t, firstClaim(id)),
}
const times: Record<string, { select1: number[]; cold: number[]; settle: number[]; warm: number[] }> = {}
for (const [name, make] of Object.entries(variants)) {
  const r = { select1: [] as number[], cold: [] as number[], settle: [] as number[], warm: [] as number[] }
  for (let i = 0; i < Number(values.samples); i++) {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    const time = async (s: { text: string; values: readonly unknown[] }): Promise<number> => {
      const at = performance.now()
      await client.query(s.text, s.values as unknown[])
      return performance.now() - at
    }
    r.select1.push(await time({ text: 'SELECT 1', values: [] }))
    const id = `drn_cold_${i}`
    r.cold.push(await time(make(id)))
    r.settle.push(
      await time(
        settle(t, {
          completions: [],
          failures: [],
          handBacks: [],
          finish: { invocationId: id, queues: ['default'] },
        }),
      ),
    )
    r.warm.push(await time(make(`${id}_again`)))
    await client.end()
  }
  times[name] = r
}
const admin = new pg.Client({ connectionString: url })
await admin.connect()
await admin.query(`DROP SCHEMA ${t} CASCADE`)
await admin.end()
const fmt = (xs: number[]): string => `p50 ${percentile(xs, 50).toFixed(2)} ms`
for (const [name, r] of Object.entries(times)) {
  console.log(
    `${name}: SELECT 1 ${fmt(r.select1)} · cold ${fmt(r.cold)} · then settle+finish ${fmt(r.settle)} · warm ${fmt(r.warm)}`,
  )
}
