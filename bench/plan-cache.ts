/**
 * What each of the claim's and the settle's stage functions costs per call under each plan cache
 * mode: a stage that PostgreSQL plans afresh on every call (`plan_cache_mode = auto` choosing
 * custom plans, or `force_custom_plan`) shows it as a per-call cost several times its generic
 * plan's. Each function is called `--calls` times from one statement on one connection, in a
 * rolled-back transaction, with its mode set as shipped, then forced generic, then forced custom,
 * `--rounds` times in turn. The schema holds a plain queue and a governed one (100 partitions,
 * concurrency + throttle + fair), a few jobs each, so that the lookups find rows.
 *
 *   DATABASE_URL=… npx tsx bench/plan-cache.ts [--calls 1000] [--rounds 3]
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { fromPg } from '../src/db/pg.js'
import { migrate } from '../src/migrate/run.js'
import { percentile } from './lib/stats.js'

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
  },
})
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required')
const calls = Number(values.calls)
const rounds = Number(values.rounds)
const schema = `plan_cache_${Date.now().toString(36)}`
const t = `"${schema}"`
const pool = new pg.Pool({ connectionString: url, max: 1 })

// Each call depends on the series' `i` (through `x`), so that the function runs once per row, not
// once for the statement. Ids that match no job keep the writes out of the figures.
const x = `left('', i)`
const STAGES: Record<string, string> = {
  claim_open: `claim_open(ARRAY['plain' || ${x}], 'bench', 0, now() + interval '1 minute', 0, 50, '{}')`,
  claim_room: `claim_room(ARRAY['plain' || ${x}, 'governed'], 50)`,
  claim_pick: `claim_pick(ARRAY['governed' || ${x}], 50, '{}')`,
  admission_places: `admission_places(ARRAY['governed' || ${x}])`,
  admission_charge: `admission_charge(ARRAY['governed' || ${x}], ARRAY['none'])`,
  claim_lease: `claim_lease(ARRAY[-i]::bigint[], ARRAY[now()], ARRAY[false], '{}', now(), 'bench', false)`,
  settle_complete: `settle_complete(ARRAY[-i]::bigint[], ARRAY[gen_random_uuid()], ARRAY[NULL]::text[],
    ARRAY[1]::bigint[], ARRAY[1]::bigint[], ARRAY[1]::bigint[], ARRAY['plain' || ${x}])`,
  settle_fail: `settle_fail(ARRAY[-i]::bigint[], ARRAY[gen_random_uuid()], ARRAY['Error' || ${x}], ARRAY['m'],
    ARRAY[NULL]::text[], ARRAY[1]::bigint[], ARRAY[false], ARRAY[NULL]::timestamptz[], ARRAY[1]::bigint[],
    ARRAY[1]::bigint[], ARRAY[1]::bigint[], ARRAY[NULL]::bigint[])`,
  settle_hand_back: `settle_hand_back(ARRAY[-i]::bigint[], ARRAY[gen_random_uuid()], ARRAY[now()])`,
  settle_finish: `settle_finish('bench' || ${x}, ARRAY['plain'])`,
}

/** A function's signatures (one per overload) and its plan cache mode as shipped (null: inherited). */
interface Stage {
  sigs: string[]
  shipped: string | null
}

async function setMode(client: pg.PoolClient, stage: Stage, mode: string | null): Promise<void> {
  for (const sig of stage.sigs)
    await client.query(
      mode === null
        ? `ALTER FUNCTION ${sig} RESET plan_cache_mode`
        : `ALTER FUNCTION ${sig} SET plan_cache_mode = ${mode}`,
    )
}

try {
  await migrate(fromPg(pool), schema)
  await pool.query(`INSERT INTO ${t}.policies (name, queue) VALUES ('governed', 'governed')`)
  await pool.query(
    `INSERT INTO ${t}.partitions (policy, partition_key, queue, rate, per_ms, burst, tokens, refilled_at, max_in_flight, quantum)
     SELECT 'governed', 'p' || i, 'governed', 100000, 1000, 100000, 100000, now(), 50, 1 FROM generate_series(1, 100) i`,
  )
  await pool.query(
    `INSERT INTO ${t}.jobs (queue, name, payload, policy, partition_key)
     SELECT 'governed', 'governed', '{}'::jsonb, 'governed', 'p' || (1 + i % 100) FROM generate_series(1, 1000) i
     UNION ALL SELECT 'plain', 'plain', '{}'::jsonb, NULL, NULL FROM generate_series(1, 1000) i`,
  )
  await pool.query(`VACUUM ANALYZE ${t}.jobs, ${t}.partitions`)
  const client = await pool.connect()
  try {
    // Each function's signatures and its mode as shipped, put back after its turns.
    const { rows } = await client.query<{ name: string; sig: string; mode: string | null }>(
      `SELECT p.proname AS name, p.oid::regprocedure::text AS sig,
              (SELECT substr(c, length('plan_cache_mode=') + 1) FROM unnest(p.proconfig) c
               WHERE c LIKE 'plan_cache_mode=%') AS mode
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1`,
      [schema],
    )
    const stages = new Map<string, Stage>()
    for (const r of rows) {
      const stage = stages.get(r.name) ?? { sigs: [], shipped: r.mode }
      stage.sigs.push(r.sig)
      stages.set(r.name, stage)
    }
    console.log(`µs per call, ${calls} calls from one statement, median of ${rounds} rounds`)
    console.log('| function | as shipped | generic | custom |')
    console.log('| --- | --- | --- | --- |')
    for (const [fn, call] of Object.entries(STAGES)) {
      const stage = stages.get(fn)
      if (!stage) throw new Error(`no function ${fn} in the schema`)
      const modes = [stage.shipped, 'force_generic_plan', 'force_custom_plan'] as const
      const times: number[][] = modes.map(() => [])
      for (let r = 0; r < rounds; r++) {
        for (const [k, mode] of modes.entries()) {
          await setMode(client, stage, mode)
          await client.query('BEGIN')
          const start = performance.now()
          // The result is read (a stable function whose result nobody reads is not called).
          await client.query(
            `SELECT count(c.r) FROM generate_series(1, $1) i, LATERAL (SELECT ${t}.${call} AS r) c`,
            [calls],
          )
          times[k]!.push(((performance.now() - start) * 1000) / calls)
          await client.query('ROLLBACK')
        }
      }
      await setMode(client, stage, stage.shipped)
      const cells = times.map((xs) => percentile(xs, 50).toFixed(1))
      console.log(`| ${fn} (${stage.shipped ?? 'inherited'}) | ${cells.join(' | ')} |`)
    }
  } finally {
    client.release()
  }
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
  await pool.end()
}
