/**
 * The WAL one drain writes, per relation and record type, read back with pg_walinspect: exact
 * where `bench/ab.ts`'s WAL per job counts everything the server wrote meanwhile (other databases
 * included). Records without a block of the run's schema (commits) are left out.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/wal.ts [--jobs 20000]
 *
 * Needs a superuser (CREATE EXTENSION pg_walinspect) and PostgreSQL 15 or later.
 */
import { parseArgs } from 'node:util'
import { provision } from './lib/database.js'
import { pool } from './lib/pg.js'
import { schemaName } from './lib/sizes.js'
import { drainAll, fillSluice, openSluice } from './systems/sluice.js'

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '20000' } } })
const n = Number(values.jobs)

async function main(): Promise<void> {
  const db = await provision((m) => process.stderr.write(`${m}\n`))
  const admin = pool(db.url, 1)
  try {
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect')
    const b = await openSluice(db.url, schemaName('wal'))
    try {
      await fillSluice(b, n)
      await admin.query(`VACUUM ANALYZE ${b.t}.jobs`)
      const lsn = async (): Promise<string> =>
        (await admin.query<{ l: string }>('SELECT pg_current_wal_flush_lsn()::text AS l')).rows[0]!.l
      const from = await lsn()
      await drainAll(b)
      // The drain's last settle commits without waiting for the flush: let the WAL writer catch up.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const to = await lsn()
      const { rows } = await admin.query<{
        relname: string
        rec: string
        n: number
        bytes: number
        fpi: number
      }>(
        `WITH rels AS (
           SELECT c.relfilenode::text AS fn, c.relname FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
           WHERE s.nspname = $3 AND c.relfilenode <> 0
         ), recs AS (
           SELECT i.resource_manager || '/' || i.record_type AS rec, i.record_length - i.fpi_length AS bytes,
                  i.fpi_length AS fpi, (regexp_match(i.block_ref, 'rel \\d+/\\d+/(\\d+)'))[1] AS fn
           FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) i
         )
         SELECT r.relname, recs.rec, count(*)::int AS n, sum(recs.bytes)::float8 AS bytes, sum(recs.fpi)::float8 AS fpi
         FROM recs JOIN rels r ON r.fn = recs.fn
         GROUP BY 1, 2 ORDER BY 4 DESC`,
        [from, to, b.schema],
      )
      let total = 0
      console.log(
        `N = ${n}: WAL per drained job, by relation and record (bytes without full-page images, FPI)`,
      )
      for (const r of rows) {
        total += r.bytes + r.fpi
        console.log(
          [
            r.relname.padEnd(24),
            r.rec.padEnd(26),
            `${r.n}`.padStart(8),
            (r.bytes / n).toFixed(1).padStart(8),
            `+${(r.fpi / n).toFixed(1)} FPI`,
          ].join(' '),
        )
      }
      console.log(`total: ${(total / n).toFixed(1)} B/job`)
    } finally {
      await b.close()
      await admin.query(`DROP SCHEMA ${b.t} CASCADE`)
    }
  } finally {
    await admin.end()
    await db.release()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
