/**
 * A/B: the drain loop of another revision against the working tree, interleaved on one fresh
 * database so that drift on a busy machine lands on both sides alike.
 *
 *   npx tsx bench/ab.ts <git-rev> [--jobs 20000] [--rounds 4] [--parallel 1] [--batch N] [--publish | --policy]
 *
 * `--policy` drains jobs under bench/lib/admission-jobs.ts's admission policy (concurrency +
 * throttle + fair over 100 partitions) instead of plain ones. `--no-archive` drains the working
 * tree's side from a queue set to `archive: false` (the revision's side as it is): that setting
 * measured against the default. `--batch N` sets the drain's batch size and concurrency to N on
 * both sides (bench/admission.ts drains with 50); the default options otherwise.
 *
 * The revision's src/ is extracted with `git archive` into a temporary directory (with a
 * link to this checkout's node_modules) and imported from there. Prints, per side, median and best jobs/s over the rounds, and the
 * median CPU (server backends + this process) and WAL per job.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { GOVERNED } from './lib/admission-jobs.js'
import { metered } from './lib/cpu.js'
import { provision } from './lib/database.js'
import { pool, settleDown } from './lib/pg.js'
import { revisionDir } from './lib/revision.js'
import { schemaName } from './lib/sizes.js'
import { percentile } from './lib/stats.js'
import { drainAll, fillSluice, openSluice, QUEUE, type SluiceLibrary } from './systems/sluice.js'

async function load(rev: string): Promise<{ sha: string; lib: SluiceLibrary }> {
  const { sha, dir } = revisionDir(rev)
  return { sha, lib: (await import(pathToFileURL(join(dir, 'src', 'index.ts')).href)) as SluiceLibrary }
}

interface Run {
  jobsPerSecond: number
  serverUs: number | null
  clientUs: number
  walBytes: number
  claimMs: number
  settleMs: number
  statements: number
}

async function once(
  url: string,
  admin: ReturnType<typeof pool>,
  lib: SluiceLibrary,
  n: number,
  parallel: number,
  policy: boolean,
  noArchive = false,
  batch: number | null = null,
) {
  const b = await openSluice(
    url,
    schemaName('ab'),
    {
      ...(noArchive ? { queues: { [QUEUE]: { archive: false } } } : {}),
      ...(batch === null ? {} : { drain: { batchSize: batch, concurrency: batch } }),
    },
    lib,
    policy ? { admission: GOVERNED } : {},
  )
  try {
    await fillSluice(b, n)
    await settleDown(admin, b.schema)
    b.log.reset()
    const { ms, cost } = await metered(admin, n, () => drainAll(b, parallel))
    if (b.handled.count !== n) throw new Error(`ran ${b.handled.count} of ${n}`)
    const mean = (kinds: string[]): number => {
      const e = b.log.events.filter((x) => kinds.includes(b.kindOf(x)))
      return e.reduce((a, x) => a + x.durationMs, 0) / Math.max(1, e.length)
    }
    return {
      jobsPerSecond: Math.round((n / ms) * 1000),
      ...cost,
      claimMs: mean(['claim']),
      settleMs: mean(['settle', 'settle+finish', 'settle+claim']),
      statements: b.log.count,
    } satisfies Run
  } finally {
    await b.close()
    await admin.query(`DROP SCHEMA ${b.t} CASCADE`)
  }
}

/**
 * `--publish`: `n` events published one call each to a topic one subscriber listens on (its jobs
 * are written, not run), with the same cost figures per event. A publish is one statement either
 * side; what it writes and reads may differ.
 */
async function oncePublish(url: string, admin: ReturnType<typeof pool>, lib: SluiceLibrary, n: number) {
  const { createSluice, defineSubscriber } = lib as SluiceLibrary & {
    defineSubscriber: typeof import('../src/index.js').defineSubscriber
  }
  const schema = schemaName('abpub')
  let statements = 0
  const sluice = createSluice({
    database: url,
    schema,
    jobs: [],
    subscribers: [defineSubscriber({ name: 'listener', topic: 'bench.*', run: () => {} })],
    env: {},
    onQuery: () => {
      statements++
    },
  })
  try {
    await sluice.migrate()
    await settleDown(admin, schema)
    statements = 0
    const { ms, cost } = await metered(admin, n, async () => {
      for (let i = 0; i < n; i++) await sluice.publish('bench.event', { n: i })
    })
    return {
      jobsPerSecond: Math.round((n / ms) * 1000),
      ...cost,
      claimMs: 0,
      settleMs: 0,
      statements,
    } satisfies Run
  } finally {
    await sluice.close()
    await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      jobs: { type: 'string', default: '20000' },
      rounds: { type: 'string', default: '4' },
      parallel: { type: 'string', default: '1' },
      publish: { type: 'boolean', default: false },
      policy: { type: 'boolean', default: false },
      'no-archive': { type: 'boolean', default: false },
      batch: { type: 'string' },
    },
  })
  const rev = positionals[0]
  if (!rev) throw new Error('usage: tsx bench/ab.ts <git-rev> [--jobs N] [--rounds R] [--parallel P]')
  const n = Number(values.jobs)
  const rounds = Number(values.rounds)
  const parallel = Number(values.parallel)
  const batch = values.batch === undefined ? null : Number(values.batch)
  const base = await load(rev)
  const current = (await import('../src/index.js')) as SluiceLibrary
  const db = await provision((m) => process.stderr.write(`${m}\n`))
  const admin = pool(db.url, 2)
  const runs: Record<'A' | 'B', Run[]> = { A: [], B: [] }
  try {
    for (let r = 0; r < rounds; r++) {
      // Alternate which side goes first.
      const order: ('A' | 'B')[] = r % 2 === 0 ? ['A', 'B'] : ['B', 'A']
      for (const side of order) {
        const lib = side === 'A' ? base.lib : current
        const run = values.publish
          ? await oncePublish(db.url, admin, lib, n)
          : await once(
              db.url,
              admin,
              lib,
              n,
              parallel,
              values.policy,
              side === 'B' && values['no-archive'],
              batch,
            )
        runs[side].push(run)
        process.stderr.write(
          `round ${r + 1} ${side}: ${run.jobsPerSecond} jobs/s, ${run.serverUs} + ${run.clientUs} µs/job\n`,
        )
      }
    }
  } finally {
    await admin.end()
    await db.release()
  }
  const med = (xs: number[]): number => percentile(xs, 50)
  console.log(
    values.publish
      ? `N = ${n} events published one call each (one subscriber), ${rounds} rounds each, interleaved; per event`
      : `N = ${n}${values.policy ? ' under an admission policy' : ''}, ${parallel} drain loop(s)${
          batch === null ? '' : `, batches of ${batch} run ${batch} at once`
        }, ${rounds} rounds each, interleaved${
          values['no-archive'] ? '; the working tree drains a queue set to archive: false' : ''
        }`,
  )
  console.log(
    [
      'side',
      'rev',
      'jobs/s median',
      'best',
      'srv µs/job',
      'node µs/job',
      'WAL B/job',
      'claim ms',
      'settle ms',
      'statements',
    ].join('\t'),
  )
  for (const side of ['A', 'B'] as const) {
    const list = runs[side]
    console.log(
      [
        side,
        side === 'A' ? base.sha : 'working tree',
        med(list.map((x) => x.jobsPerSecond)),
        Math.max(...list.map((x) => x.jobsPerSecond)),
        med(list.map((x) => x.serverUs ?? Number.NaN)),
        med(list.map((x) => x.clientUs)),
        med(list.map((x) => x.walBytes)),
        med(list.map((x) => x.claimMs)).toFixed(2),
        med(list.map((x) => x.settleMs)).toFixed(2),
        med(list.map((x) => x.statements)),
      ].join('\t'),
    )
  }
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
