/**
 * A/B of the publish statement: another revision's against the working tree's, each on a schema
 * of its own migrated by its own code, published to from one connection, interleaved, so that the
 * server's CPU (the backend's, from /proc) and WAL per event are exact on a shared machine. One
 * subscriber listens, so each event writes its delivery and job as in production.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/publish-ab.ts <git-rev> [--events 1500] [--rounds 6]
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { provision } from './lib/database.js'
import { pool } from './lib/pg.js'
import { revisionDir } from './lib/revision.js'
import { schemaName } from './lib/sizes.js'
import { percentile } from './lib/stats.js'

type Lib = typeof import('../src/index.js')

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { events: { type: 'string', default: '1500' }, rounds: { type: 'string', default: '6' } },
  })
  const rev = positionals[0]
  if (!rev) throw new Error('usage: tsx bench/publish-ab.ts <git-rev> [--events N] [--rounds R]')
  const n = Number(values.events)
  const rounds = Number(values.rounds)
  const { sha, dir } = revisionDir(rev)
  const sides: { label: string; lib: Lib; schema: string }[] = [
    {
      label: sha,
      lib: (await import(pathToFileURL(join(dir, 'src', 'index.ts')).href)) as Lib,
      schema: schemaName('pub_a'),
    },
    { label: 'working tree', lib: (await import('../src/index.js')) as Lib, schema: schemaName('pub_b') },
  ]
  const db = await provision((m) => process.stderr.write(`${m}\n`))
  const admin = pool(db.url, 1)
  try {
    for (const side of sides) {
      const s = side.lib.createSluice({
        database: db.url,
        schema: side.schema,
        jobs: [],
        subscribers: [side.lib.defineSubscriber({ name: 'listener', topic: 'bench.*', run: () => {} })],
        env: {},
      })
      await s.migrate()
      await s.close()
    }
    const client = await admin.connect()
    const pid = (await client.query<{ p: number }>('SELECT pg_backend_pid() AS p')).rows[0]!.p
    const ticks = async (): Promise<number> => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return Number(f[11]) + Number(f[12])
    }
    const cpu: Record<string, number[]> = {}
    const wal: Record<string, number[]> = {}
    let k = 0
    for (let r = 0; r < rounds; r++) {
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
        const t0 = await ticks()
        const l0 = (await client.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]!.l
        for (let i = 0; i < n; i++) {
          const event = [
            {
              event_id: `e${k++}`,
              topic: 'bench.event',
              headers: {},
              published_at: null,
              delay_ms: 0,
              payload: { n: i },
            },
          ]
          await client.query(`SELECT queue, jobs FROM "${side.schema}".publish_events($1::jsonb)`, [
            JSON.stringify(event),
          ])
        }
        const w = await client.query<{ b: number }>(
          'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 AS b',
          [l0],
        )
        cpu[side.label] = [...(cpu[side.label] ?? []), (((await ticks()) - t0) * 10_000) / n]
        wal[side.label] = [...(wal[side.label] ?? []), w.rows[0]!.b / n]
      }
    }
    client.release()
    console.log(`${n} events × ${rounds} rounds per side, one subscriber, one connection, interleaved`)
    console.log(['side', 'server µs/event median', 'rounds', 'WAL B/event median'].join('\t'))
    for (const side of sides) {
      const c = cpu[side.label]!
      console.log(
        [
          side.label,
          Math.round(percentile(c, 50)),
          c.map(Math.round).join(' '),
          Math.round(percentile(wal[side.label]!, 50)),
        ].join('\t'),
      )
    }
    for (const side of sides) await admin.query(`DROP SCHEMA "${side.schema}" CASCADE`)
  } finally {
    await admin.end()
    await db.release()
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
