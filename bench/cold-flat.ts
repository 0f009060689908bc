/**
 * How much of a cold first claim is the claim's functions, and how much any statement doing its
 * work would pay: on each of `--samples` fresh connections, either the claim as a drain sends it
 * (claim() and the plpgsql stages it calls, each compiled on first use), or one flat statement
 * doing the plain path's core work (register the drain, open queues, walk the ready index with
 * the shared per-row condition, lease). Each is sent twice per connection (cold, then warm),
 * inside a transaction that is rolled back, so the backlog stays the same.
 *
 * The flat statement is a probe, not a claim: it leaves out what the plain path also does
 * (single-consumer leases, higher-priority drains, time fit, while-executing keys, `more`). Its
 * cold time is what a claim made of one statement could at best get down to.
 *
 *   DATABASE_URL=… npx tsx bench/cold-flat.ts [--samples 15]
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { z } from 'zod'
import { createSluice, defineJob } from '../src/index.js'
import { claim } from '../src/sql/index.js'
import { percentile } from './lib/stats.js'

const { values } = parseArgs({ options: { samples: { type: 'string', default: '15' } } })
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const schema = `cold_flat_${Date.now().toString(36)}`
const t = `"${schema}"`
const job = defineJob({ name: 'noop', input: z.object({}), run: () => {} })
const sluice = createSluice({ database: url, schema, jobs: [job] })
await sluice.migrate()
await sluice.enqueueMany(
  job,
  Array.from({ length: 100 }, () => ({})),
)
await sluice.close()

// The per-row condition as every walk of the claim uses it (migrations/fragments/).
const candidate = readFileSync(
  new URL('../migrations/fragments/claim_candidate.sql', import.meta.url),
  'utf8',
)
  .split('\n')
  .filter((line) => !line.startsWith('--'))
  .join('\n')
  .replaceAll(':ROW', 'j')
  .replaceAll(':SLUICE_SCHEMA', t)

const flat = (invocation: string) => ({
  text: `WITH reg AS (
    INSERT INTO ${t}.invocations AS i (id, queues, priority, expires_at, jobs_done)
    VALUES ($4, $1, 0, now() + $3 * interval '1 millisecond', 0)
    ON CONFLICT ON CONSTRAINT invocations_pkey DO UPDATE SET expires_at = excluded.expires_at
    RETURNING 1
  ), open AS (
    SELECT q.name FROM unnest($1::text[]) AS q(name) LEFT JOIN ${t}.queues c ON c.name = q.name
    WHERE c.name IS NULL OR (NOT c.paused AND coalesce(c.breaker_until, '-infinity') <= now()
                             AND coalesce(c.held_until, '-infinity') <= now() AND NOT c.single_consumer)
  ), picked AS (
    SELECT p.id FROM open CROSS JOIN LATERAL (
      SELECT j.id FROM ${t}.jobs j
      WHERE j.queue = open.name AND j.policy IS NULL AND ${candidate}
      ORDER BY j.priority, j.run_at, j.id
      LIMIT $2
      FOR UPDATE SKIP LOCKED) p
  ), claimed AS (
    UPDATE ${t}.jobs j
    SET run_at = now() + $3 * interval '1 millisecond', attempts = j.attempts + 1,
        lease_token = gen_random_uuid(), leased_by = $4, started_at = now()
    FROM picked WHERE j.id = picked.id
    RETURNING j.id, j.queue, j.name, j.payload, j.priority, j.attempts, j.max_attempts, j.lease_token,
              j.enqueued_at, j.trace_context
  )
  SELECT c.*, (SELECT count(*) FROM reg) AS registered FROM claimed c`,
  values: [['default'], 1, 60_000, invocation],
})
const asDrainSends = (invocation: string) =>
  claim(t, {
    queues: ['default'],
    limit: 1,
    leaseMs: 60_000,
    invocationId: invocation,
    invocationPriority: 0,
    jobsDone: 0,
  })

const times = {
  claim: { cold: [] as number[], warm: [] as number[] },
  flat: { cold: [] as number[], warm: [] as number[] },
}
for (let i = 0; i < Number(values.samples); i++) {
  for (const kind of ['claim', 'flat'] as const) {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query('SELECT 1')
    const statement = kind === 'claim' ? asDrainSends(`drn_cold_${i}`) : flat(`drn_cold_${i}`)
    for (const when of ['cold', 'warm'] as const) {
      const at = performance.now()
      await client.query('BEGIN')
      const { rows } = await client.query(statement.text, statement.values as unknown[])
      await client.query('ROLLBACK')
      times[kind][when].push(performance.now() - at)
      if (rows.filter((r) => r.id !== null).length !== 1) throw new Error(`${kind} claimed no job`)
    }
    await client.end()
  }
}
const admin = new pg.Client({ connectionString: url })
await admin.connect()
await admin.query(`DROP SCHEMA ${t} CASCADE`)
await admin.end()
const p50 = (xs: number[]): string => `${percentile(xs, 50).toFixed(2)} ms`
console.log(`claim as a drain sends it: cold p50 ${p50(times.claim.cold)}, warm ${p50(times.claim.warm)}`)
console.log(`one flat statement (probe): cold p50 ${p50(times.flat.cold)}, warm ${p50(times.flat.warm)}`)
