/**
 * The settle of one batch, another revision against the working tree: WAL bytes and records per
 * job and server time, from EXPLAIN (ANALYZE, WAL) of the settle statement itself. That WAL is
 * the backend's own, so other sessions on a shared cluster do not reach it (bench/ab.ts reads
 * the cluster's WAL position, which they do move).
 *
 *   DATABASE_URL=postgres://… npx tsx bench/settle-wal.ts <git-rev> [--batch 200] [--names 1] [--reps 15]
 *
 * Per side and round: a fresh schema migrated by that side, `batch` leased jobs over `names` job
 * names inserted directly, settled as completed; two warm-up settles, then `reps` measured. Rounds
 * alternate sides twice. Prints medians.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { fromPg } from '../src/db/pg.js'
import * as run from '../src/migrate/run.js'
import * as sql from '../src/sql/settle.js'
import { revisionDir } from './lib/revision.js'

interface Side {
  migrate: typeof run.migrate
  settle: typeof sql.settle
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    batch: { type: 'string', default: '200' },
    names: { type: 'string', default: '1' },
    reps: { type: 'string', default: '15' },
  },
})
const rev = positionals[0]
if (!rev) throw new Error('usage: tsx bench/settle-wal.ts <git-rev> [--batch 200] [--names 1] [--reps 15]')
const batch = Number(values.batch)
const names = Number(values.names)
const reps = Number(values.reps)

const { sha, dir } = revisionDir(rev)
const base: Side = {
  migrate: ((await import(pathToFileURL(join(dir, 'src/migrate/run.ts')).href)) as typeof run).migrate,
  settle: ((await import(pathToFileURL(join(dir, 'src/sql/settle.ts')).href)) as typeof sql).settle,
}
const sides: Record<'A' | 'B', Side> = { A: base, B: { migrate: run.migrate, settle: sql.settle } }
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 1 })
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const seen: Record<'A' | 'B', { bytes: number[]; records: number[]; fpi: number[]; ms: number[] }> = {
  A: { bytes: [], records: [], fpi: [], ms: [] },
  B: { bytes: [], records: [], fpi: [], ms: [] },
}

try {
  for (const side of ['A', 'B', 'B', 'A'] as const) {
    const { migrate, settle } = sides[side]
    const schema = `settle_wal_${side.toLowerCase()}_${Date.now().toString(36)}`
    const t = `"${schema}"`
    await migrate(fromPg(pool), schema)
    try {
      for (let r = 0; r < reps + 2; r++) {
        const { rows } = await pool.query<{ id: string; token: string }>(
          `INSERT INTO ${t}.jobs (queue, name, payload, run_at, attempts, lease_token, leased_by)
           SELECT 'default', 'job' || (i % $2), '{}', now() + interval '30 s', 1, gen_random_uuid(), 'inv'
           FROM generate_series(1, $1) i RETURNING id::text, lease_token::text AS token`,
          [batch, names],
        )
        const statement = settle(t, {
          completions: rows.map((j, i) => ({
            id: j.id,
            token: j.token,
            status: 'completed' as const,
            durationMs: i % 7,
            waitMs: 1_000 + i,
          })),
          failures: [],
          handBacks: [],
        })
        const plan = (
          await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, WAL, COSTS OFF) ${statement.text}`, [
            ...statement.values,
          ])
        ).rows
          .map((x) => x['QUERY PLAN'])
          .join('\n')
        if (r < 2) continue
        const wal = /WAL: records=(\d+)(?: fpi=(\d+))? bytes=(\d+)/.exec(plan)
        if (!wal) throw new Error(`no WAL line in the plan:\n${plan}`)
        seen[side].records.push(Number(wal[1]))
        seen[side].fpi.push(Number(wal[2] ?? 0))
        seen[side].bytes.push(Number(wal[3]))
        seen[side].ms.push(Number(/Execution Time: ([0-9.]+) ms/.exec(plan)![1]))
      }
    } finally {
      await pool.query(`DROP SCHEMA ${t} CASCADE`)
    }
  }
} finally {
  await pool.end()
}

console.log(`settle of ${batch} completed jobs over ${names} name(s), ${2 * reps} settles per side`)
console.log(['side', 'rev', 'WAL B/job', 'WAL records/job', 'FPI', 'server µs/job median', 'best'].join('\t'))
for (const side of ['A', 'B'] as const) {
  const s = seen[side]
  console.log(
    [
      side,
      side === 'A' ? sha : 'working tree',
      (median(s.bytes) / batch).toFixed(1),
      (median(s.records) / batch).toFixed(2),
      median(s.fpi),
      ((median(s.ms) * 1000) / batch).toFixed(1),
      ((Math.min(...s.ms) * 1000) / batch).toFixed(1),
    ].join('\t'),
  )
}
