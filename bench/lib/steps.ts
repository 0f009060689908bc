/** What bench/steps.ts and the `steps` scenario measure (see bench/steps.ts). */
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { z } from 'zod'
import { createApp, createSluice, defineJob, type QueryEvent, type Sluice } from '../../src/index.js'
import { cpuSince, cpuSnapshot } from './cpu.js'
import type { pool } from './pg.js'
import { schemaName } from './sizes.js'
import { round } from './stats.js'

export interface StepsConfig {
  /** Jobs drained, with and without steps. */
  jobs: number
  /** Steps per job. */
  steps: number
  /** Jobs waiting for an event each. */
  waiters: number
}

export interface Run {
  ms: number
  statements: number
  serverMs: number | null
  walBytes: number
}

export async function drainRun(
  cfg: StepsConfig,
  url: string,
  admin: ReturnType<typeof pool>,
  withSteps: boolean,
): Promise<Run> {
  let statements = 0
  const job = defineJob({
    name: 'work',
    queue: 'bench',
    input: z.object({ n: z.number() }),
    run: async (input, ctx) => {
      if (!withSteps) return
      for (let i = 0; i < cfg.steps; i++) await ctx.step(`s${i}`, () => input.n + i)
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
  for (let i = 0; i < cfg.jobs; i += 5000)
    await sluice.enqueueMany(
      job,
      Array.from({ length: Math.min(5000, cfg.jobs - i) }, (_, k) => ({ n: i + k })),
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
  if (archived.rows[0]!.n !== cfg.jobs) throw new Error(`archived ${archived.rows[0]!.n} of ${cfg.jobs}`)
  await sluice.close()
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`)
  return { ms, statements, serverMs: used.serverMs, walBytes: used.walBytes }
}

const SECRET = 'bench-steps-wake-secret-0123456789'
export const POLL_MS = 1_000

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
async function publishAll(
  cfg: StepsConfig,
  publisher: Sluice,
  resumed: Map<number, number>,
): Promise<number[]> {
  const published = new Map<number, number>()
  for (let n = 0; n < cfg.waiters; n++) {
    published.set(n, Date.now())
    await publisher.publish('bench.go', { n })
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 200))
  }
  const end = Date.now() + 30_000
  while (resumed.size < cfg.waiters && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  if (resumed.size < cfg.waiters)
    throw new Error(`only ${resumed.size} of ${cfg.waiters} waiting jobs resumed`)
  return [...resumed].map(([n, at]) => at - published.get(n)!)
}

/** Enqueues the waiters and runs them to their waits. */
async function parkWaiters(cfg: StepsConfig, sluice: Sluice): Promise<void> {
  await sluice.migrate()
  await sluice.enqueueMany(
    'waiter',
    Array.from({ length: cfg.waiters }, (_, n) => ({ n })),
  )
  for (;;) if ((await sluice.drain()).claimed === 0) break
}

/** Publish to resume: with a drain polling every second, and with wake-ups (a signed POST /drain per publish). */
export async function wakeRuns(
  cfg: StepsConfig,
  url: string,
): Promise<{ polled: number[]; woken: number[] }> {
  const polledAt = new Map<number, number>()
  const plain = waiterSluice(url, schemaName('wait_poll'), polledAt)
  await parkWaiters(cfg, plain)
  let polling = true
  const loop = (async () => {
    while (polling) {
      await plain.drain({ budgetMs: 5_000 })
      await new Promise((r) => setTimeout(r, POLL_MS))
    }
  })()
  let polled: number[]
  try {
    polled = await publishAll(cfg, plain, polledAt)
  } finally {
    polling = false
    await loop
    await plain.close()
  }

  const wokenAt = new Map<number, number>()
  const schema = schemaName('wait_wake')
  const drainSide = waiterSluice(url, schema, wokenAt)
  await parkWaiters(cfg, drainSide)
  const app = createApp(drainSide, { auth: { secrets: [SECRET] }, env: {} })
  const server = createAdaptorServer({ fetch: app.fetch })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const publisher = waiterSluice(url, schema, new Map(), {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/drain`,
  })
  try {
    return { polled, woken: await publishAll(cfg, publisher, wokenAt) }
  } finally {
    await publisher.close()
    await new Promise((resolve) => server.close(resolve))
    await drainSide.close()
  }
}

/** N completed jobs of cfg.steps steps, then maintenance with retention 0: what stays behind. */
export async function storageRun(
  cfg: StepsConfig,
  url: string,
  admin: ReturnType<typeof pool>,
  n: number,
): Promise<void> {
  const job = defineJob({
    name: 'stored',
    queue: 'bench',
    input: z.object({ n: z.number() }),
    run: async (input, ctx) => {
      for (let i = 0; i < cfg.steps; i++) await ctx.step(`s${i}`, () => ({ n: input.n, i }))
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
    `Storage: ${n} jobs × ${cfg.steps} steps completed in ${round(ms / 1000, 1)} s (${Math.round((n * cfg.steps * 1000) / ms)} steps/s)`,
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
