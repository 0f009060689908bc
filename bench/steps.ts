/**
 * What durable steps cost (docs/steps.md), in one run on a fresh database:
 *
 * - **Steps**: `--jobs` jobs of `--steps` no-op steps each, drained to the end, against the same
 *   jobs without steps: steps per second, and per step the statements, the server CPU and the WAL
 *   the steps add (the difference between the two runs, divided by the steps).
 * - **Publish to resume**: `--waiters` jobs each waiting for its own event; the events are
 *   published one by one and each job records when it resumed. p50 and p95 with a drain polling
 *   every second, and with wake-ups: the publish statement makes the job due and says to wake its
 *   queue's drain, and a signed POST /drain (to a local HTTP app) runs it.
 *
 * - **Storage** (`--storage N`, instead of the above): N completed jobs of `--steps` steps each,
 *   then maintenance with a retention of 0 until the archive is empty: the step rows and the
 *   tables' sizes before and after, so that nothing is seen to grow without bound.
 *
 *   DATABASE_URL=postgres://… npx tsx bench/steps.ts [--jobs 2000] [--steps 10] [--waiters 200]
 *   DATABASE_URL=postgres://… npx tsx bench/steps.ts --storage 100000
 */
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import { createAdaptorServer } from '@hono/node-server'
import { z } from 'zod'
import { createApp, createSluice, defineJob, type QueryEvent, type Sluice } from '../src/index.js'
import { cpuSince, cpuSnapshot } from './lib/cpu.js'
import { provision } from './lib/database.js'
import { pool } from './lib/pg.js'
import { schemaName } from './lib/sizes.js'
import { percentile, round } from './lib/stats.js'

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    steps: { type: 'string', default: '10' },
    waiters: { type: 'string', default: '200' },
    storage: { type: 'string' },
  },
})
const JOBS = Number(values.jobs)
const STEPS = Number(values.steps)
const WAITERS = Number(values.waiters)

interface Run {
  ms: number
  statements: number
  serverMs: number | null
  walBytes: number
}

async function drainRun(url: string, admin: ReturnType<typeof pool>, withSteps: boolean): Promise<Run> {
  let statements = 0
  const job = defineJob({
    name: 'work',
    queue: 'bench',
    input: z.object({ n: z.number() }),
    run: async (input, ctx) => {
      if (!withSteps) return
      for (let i = 0; i < STEPS; i++) await ctx.step(`s${i}`, () => input.n + i)
    },
  })
  const schema = schemaName(withSteps ? 'steps' : 'nosteps')
  const sluice = createSluice({
    database: url,
    schema,
    jobs: [job],
    env: {},
    onQuery: (_e: QueryEvent) => {
      statements++
    },
    drain: { concurrency: 10, batchSize: 50 },
  })
  await sluice.migrate()
  for (let i = 0; i < JOBS; i += 5000)
    await sluice.enqueueMany(
      job,
      Array.from({ length: Math.min(5000, JOBS - i) }, (_, k) => ({ n: i + k })),
    )
  await admin.query(`VACUUM ANALYZE "${schema}".jobs`)
  statements = 0
  const before = await cpuSnapshot(admin)
  const started = performance.now()
  for (;;) {
    const s = await sluice.drain({ budgetMs: 60_000 })
    if (s.stoppedBy === 'empty' && s.remainingReady === 0) break
  }
  const ms = performance.now() - started
  const used = await cpuSince(admin, before)
  const archived = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".archive`)
  if (archived.rows[0]!.n !== JOBS) throw new Error(`archived ${archived.rows[0]!.n} of ${JOBS}`)
  await sluice.close()
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
  return { ms, statements, serverMs: used.serverMs, walBytes: used.walBytes }
}

const SECRET = 'bench-steps-wake-secret-0123456789'
const POLL_MS = 1_000

/** A Sluice with one job that waits for its event and records when it resumed. */
function waiterSluice(
  url: string,
  schema: string,
  resumed: Map<number, number>,
  wake?: { url: string },
): Sluice {
  const job = defineJob({
    name: 'waiter',
    queue: 'bench',
    input: z.object({ n: z.number() }),
    run: async (input, ctx) => {
      const event = await ctx.waitForEvent('go', { topic: 'bench.go', match: { n: input.n }, timeout: '1h' })
      if (event) resumed.set(input.n, Date.now())
    },
  })
  return createSluice({
    database: url,
    schema,
    jobs: [job],
    env: {},
    drain: { concurrency: 10, batchSize: 50 },
    ...(wake ? { wake: { url: wake.url, secret: SECRET, debounceMs: 0 } } : {}),
  })
}

/** Publishes each waiting job's event, 50-250 ms apart; returns publish → resumed per job. */
async function publishAll(publisher: Sluice, resumed: Map<number, number>): Promise<number[]> {
  const published = new Map<number, number>()
  for (let n = 0; n < WAITERS; n++) {
    published.set(n, Date.now())
    await publisher.publish('bench.go', { n })
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 200))
  }
  const end = Date.now() + 30_000
  while (resumed.size < WAITERS && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  if (resumed.size < WAITERS) throw new Error(`only ${resumed.size} of ${WAITERS} waiting jobs resumed`)
  return [...resumed].map(([n, at]) => at - published.get(n)!)
}

/** Enqueues the waiters and runs them to their waits. */
async function parkWaiters(sluice: Sluice): Promise<void> {
  await sluice.migrate()
  await sluice.enqueueMany(
    'waiter',
    Array.from({ length: WAITERS }, (_, n) => ({ n })),
  )
  for (;;) if ((await sluice.drain()).claimed === 0) break
}

/** Publish to resume: with a drain polling every second, and with wake-ups (a signed POST /drain per publish). */
async function wakeRuns(url: string): Promise<{ polled: number[]; woken: number[] }> {
  const polledAt = new Map<number, number>()
  const plain = waiterSluice(url, schemaName('wait_poll'), polledAt)
  await parkWaiters(plain)
  let polling = true
  const loop = (async () => {
    while (polling) {
      await plain.drain({ budgetMs: 5_000 })
      await new Promise((r) => setTimeout(r, POLL_MS))
    }
  })()
  let polled: number[]
  try {
    polled = await publishAll(plain, polledAt)
  } finally {
    polling = false
    await loop
    await plain.close()
  }

  const wokenAt = new Map<number, number>()
  const schema = schemaName('wait_wake')
  const drainSide = waiterSluice(url, schema, wokenAt)
  await parkWaiters(drainSide)
  const app = createApp(drainSide, { auth: { secrets: [SECRET] }, env: {} })
  const server = createAdaptorServer({ fetch: app.fetch })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const publisher = waiterSluice(url, schema, new Map(), {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/drain`,
  })
  try {
    return { polled, woken: await publishAll(publisher, wokenAt) }
  } finally {
    await publisher.close()
    await new Promise((resolve) => server.close(resolve))
    await drainSide.close()
  }
}

/** N completed jobs of STEPS steps, then maintenance with retention 0: what stays behind. */
async function storageRun(url: string, admin: ReturnType<typeof pool>, n: number): Promise<void> {
  const job = defineJob({
    name: 'stored',
    queue: 'bench',
    input: z.object({ n: z.number() }),
    run: async (input, ctx) => {
      for (let i = 0; i < STEPS; i++) await ctx.step(`s${i}`, () => ({ n: input.n, i }))
      return { n: input.n }
    },
  })
  const schema = schemaName('storage')
  const t = `"${schema}"`
  const sluice = createSluice({
    database: url,
    schema,
    jobs: [job],
    env: {},
    drain: { concurrency: 20, batchSize: 100 },
    maintenance: { archiveRetentionMs: 0, batchSize: 10_000, intervalMs: 0 },
  })
  await sluice.migrate()
  for (let i = 0; i < n; i += 5000)
    await sluice.enqueueMany(
      job,
      Array.from({ length: Math.min(5000, n - i) }, (_, k) => ({ n: i + k })),
    )
  const started = performance.now()
  const loops = Array.from({ length: 2 }, async () => {
    for (;;) {
      const s = await sluice.drain({ budgetMs: 60_000 })
      if (s.stoppedBy === 'empty' && s.remainingReady === 0) return
    }
  })
  await Promise.all(loops)
  const ms = performance.now() - started
  const sizes = async () =>
    (
      await admin.query<{
        steps: number
        archived: number
        steps_bytes: string
        archive_bytes: string
        log: number
      }>(
        `SELECT (SELECT count(*)::int FROM ${t}.job_steps) AS steps, (SELECT count(*)::int FROM ${t}.archive) AS archived,
                pg_size_pretty(pg_total_relation_size('${t}.job_steps')) AS steps_bytes,
                pg_size_pretty(pg_total_relation_size('${t}.archive')) AS archive_bytes,
                (SELECT count(*)::int FROM ${t}.event_log) AS log`,
      )
    ).rows[0]!
  const before = await sizes()
  console.log(
    `Storage: ${n} jobs × ${STEPS} steps completed in ${round(ms / 1000, 1)} s (${Math.round((n * STEPS * 1000) / ms)} steps/s)`,
  )
  console.log(
    `  after the drains: ${before.archived} archived (${before.archive_bytes}), ${before.steps} step rows (${before.steps_bytes})`,
  )
  // Maintenance as cron runs it, with a retention of 0: each call prunes up to batchSize archived jobs with their steps.
  let calls = 0
  for (;;) {
    await sluice.maintain()
    calls++
    const left = await admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${t}.archive`)
    if (left.rows[0]!.n === 0) break
  }
  await admin.query(`VACUUM ${t}.job_steps, ${t}.archive`)
  const after = await sizes()
  console.log(
    `  after ${calls} maintenance calls (retention 0) and a VACUUM: ${after.archived} archived (${after.archive_bytes}), ${after.steps} step rows (${after.steps_bytes})`,
  )
  if (after.steps !== 0) throw new Error(`${after.steps} step rows left behind their pruned jobs`)
  await sluice.close()
  await admin.query(`DROP SCHEMA ${t} CASCADE`)
}

async function main(): Promise<void> {
  const db = await provision((m) => process.stderr.write(`${m}\n`))
  const admin = pool(db.url, 1)
  try {
    if (values.storage !== undefined) {
      await storageRun(db.url, admin, Number(values.storage))
      return
    }
    const plain = await drainRun(db.url, admin, false)
    const stepped = await drainRun(db.url, admin, true)
    const steps = JOBS * STEPS
    const per = (a: number | null, b: number | null): string =>
      a === null || b === null ? 'n/a' : String(round((a - b) / steps, 3))
    console.log(`Steps: ${JOBS} jobs × ${STEPS} no-op steps, drained to the end (concurrency 10, batch 50)`)
    console.log(`  without steps: ${round(plain.ms)} ms, ${plain.statements} statements`)
    console.log(`  with steps:    ${round(stepped.ms)} ms, ${stepped.statements} statements`)
    console.log(`  steps per second: ${Math.round((steps / stepped.ms) * 1000)}`)
    console.log(
      `  per step: ${round((stepped.statements - plain.statements) / steps, 3)} statements, ` +
        `${per(stepped.serverMs === null ? null : stepped.serverMs * 1000, plain.serverMs === null ? null : plain.serverMs * 1000)} µs server CPU, ` +
        `${round((stepped.walBytes - plain.walBytes) / steps, 1)} B WAL`,
    )
    const { polled, woken } = await wakeRuns(db.url)
    console.log(`Publish to resume: ${WAITERS} waiting jobs, one event each, published 50-250 ms apart`)
    for (const [label, values] of [
      [`a drain polling every ${POLL_MS} ms`, polled],
      ['wake-ups (the publish makes the job due and POSTs /drain; debounce 0)', woken],
    ] as const) {
      console.log(
        `  ${label}: p50 ${percentile(values, 50)} ms, p95 ${percentile(values, 95)} ms, max ${Math.max(...values)} ms`,
      )
    }
  } finally {
    await admin.end()
    await db.release()
  }
}

await main()
