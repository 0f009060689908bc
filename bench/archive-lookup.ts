/**
 * The archive at a size: jobs archived as drains leave them (one row per settle of 200, queue and
 * range of 1,024 ids, migration 0023), then
 * - a job looked up by id as `inspect.job(id)` and `result(id)` look it up: the statements'
 *   client-side time, p50 / p99 over `--lookups` random ids (and ids never archived), and the plan
 *   of one with its buffers;
 * - bytes per archived job: the archive's table, TOAST and indexes, against the same jobs in the
 *   earlier layout (a row and a primary-key entry per job), built beside it for the comparison.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/archive-lookup.ts [--archived 1000000] [--lookups 500]
 */
import { parseArgs } from 'node:util'
import pg from 'pg'
import { fromPg } from '../src/db/pg.js'
import { migrate } from '../src/migrate/run.js'
import { getJob, getJobResult } from '../src/sql/jobs.js'
import { fillArchive } from './lib/archive.js'
import { percentile } from './lib/stats.js'

const { values } = parseArgs({
  options: {
    archived: { type: 'string', default: '1000000' },
    lookups: { type: 'string', default: '500' },
    keep: { type: 'boolean', default: false },
  },
})
const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const schema = `archive_lookup_${Date.now().toString(36)}`
const t = `"${schema}"`
const pool = new pg.Pool({ connectionString: url, max: 2 })
const archived = Number(values.archived)
const lookups = Number(values.lookups)

const bytes = async (relation: string): Promise<number> =>
  Number((await pool.query(`SELECT pg_total_relation_size($1::regclass)::float8 AS b`, [relation])).rows[0].b)

try {
  await migrate(fromPg(pool), schema)
  await fillArchive(pool, t, { jobs: archived, start: 0, queue: 'q0' })
  // The earlier layout of the same jobs, for its size.
  await pool.query(
    `CREATE TABLE ${t}.archive_flat (
       id bigint PRIMARY KEY, queue text NOT NULL, name text NOT NULL, payload jsonb NOT NULL, priority smallint NOT NULL,
       attempts integer NOT NULL, max_attempts integer NOT NULL, status text NOT NULL, enqueued_at timestamptz NOT NULL,
       duration_ms bigint, finished_at timestamptz NOT NULL, wait_ms bigint, errors jsonb, invocation text, result jsonb)`,
  )
  await pool.query(
    `INSERT INTO ${t}.archive_flat SELECT id, queue, name, payload, priority, attempts, max_attempts, status, enqueued_at,
       duration_ms, finished_at, wait_ms, errors, invocation, result FROM ${t}.archive`,
  )
  await pool.query(`VACUUM (ANALYZE) ${t}.archive_groups`)
  await pool.query(`VACUUM (ANALYZE) ${t}.archive_flat`)
  const rows = Number((await pool.query(`SELECT count(*)::float8 AS n FROM ${t}.archive_groups`)).rows[0].n)
  const grouped = await bytes(`${t}.archive_groups`)
  const flat = await bytes(`${t}.archive_flat`)
  console.log(`${archived} archived jobs in ${rows} archive rows (schema ${schema})`)
  console.log(
    `bytes per job: ${(grouped / archived).toFixed(1)} as archive rows, ${(flat / archived).toFixed(1)} a row and a key per job`,
  )

  const time = async (statement: { text: string; values: readonly unknown[] }): Promise<number> => {
    const start = process.hrtime.bigint()
    await pool.query(statement.text, [...statement.values])
    return Number(process.hrtime.bigint() - start) / 1e6
  }
  const ids = Array.from({ length: lookups }, () => String(1 + Math.floor(Math.random() * archived)))
  for (const id of ids.slice(0, 20)) await time(getJob(t, id))
  const table: string[] = ['| lookup | p50 ms | p99 ms |', '| --- | --- | --- |']
  for (const [label, make, pick] of [
    ['inspect.job(id), archived', getJob, (id: string) => id],
    ['result(id), archived', getJobResult, (id: string) => id],
    ['inspect.job(id), never archived', getJob, (id: string) => String(archived + 1_000_000 + Number(id))],
  ] as const) {
    const ms: number[] = []
    for (const id of ids) ms.push(await time(make(t, pick(id))))
    table.push(`| ${label} | ${percentile(ms, 50).toFixed(2)} | ${percentile(ms, 99).toFixed(2)} |`)
  }
  console.log(table.join('\n'))
  const plan = getJobResult(t, ids[0]!)
  const { rows: explained } = await pool.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${plan.text}`,
    [...plan.values],
  )
  console.log(`\nresult(${ids[0]}):\n${explained.map((r) => r['QUERY PLAN']).join('\n')}`)
} finally {
  if (!values.keep) await pool.query(`DROP SCHEMA IF EXISTS ${t} CASCADE`)
  await pool.end()
}
