/**
 * Dead-letter retries racing each other and enqueues, on real connections: every dead letter
 * ends up either as a job or still a dead letter (none lost), and one unique key never has two
 * jobs. The rows are counted before and after across jobs, blocked, archive and dead_letters.
 */
import pg from 'pg'
import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createApp, defineJob, type Sluice } from '../../src/index.js'
import { quoteSchema } from '../../src/names.js'
import { databaseUrl, makeSluice, perTestConnections, type TestSluice } from '../helpers/db.js'
import { postJson, testEnv } from '../helpers/http.js'
import { rowFactory } from '../helpers/rows.js'

let env: TestSluice | undefined
const { connections, closeAll } = perTestConnections(() => env!.schema)
afterEach(async () => {
  await closeAll()
  await env?.cleanup()
  env = undefined
})

const job = defineJob({
  name: 'sync',
  input: z.object({ k: z.string(), n: z.number() }),
  unique: { key: (i) => `sync:${i.k}` },
  run: () => {},
})

const CONNECTIONS = 8

interface Counts {
  jobs: number
  blocked: number
  archive: number
  deadLetters: number
  /** The most jobs (queued or blocked) any one unique key has. */
  perKeyMax: number
  /** Keys with at least one job. */
  keysWithJobs: number
}

async function counts(e: TestSluice): Promise<Counts> {
  const [row] = await e.sql<{ [K in keyof Counts]: number }>(
    `WITH live AS (SELECT payload->>'k' AS k FROM $schema.jobs UNION ALL SELECT payload->>'k' FROM $schema.blocked),
          per AS (SELECT k, count(*) AS n FROM live GROUP BY k)
     SELECT (SELECT count(*)::int FROM $schema.jobs) AS jobs,
            (SELECT count(*)::int FROM $schema.blocked) AS blocked,
            (SELECT count(*)::int FROM $schema.archive) AS archive,
            (SELECT count(*)::int FROM $schema.dead_letters) AS "deadLetters",
            (SELECT coalesce(max(n), 0)::int FROM per) AS "perKeyMax",
            (SELECT count(*)::int FROM per) AS "keysWithJobs"`,
  )
  return row!
}

const total = (c: Counts): number => c.jobs + c.blocked + c.archive + c.deadLetters

/** Dead letters of `job`, `perKey` of each of `keys` keys, interleaved; returns their ids. */
async function seed(e: TestSluice, keys: number, perKey: number, prefix = ''): Promise<string[]> {
  const rows = rowFactory(e.admin, quoteSchema(e.schema))
  const ids: string[] = []
  for (let n = 0; n < perKey; n++)
    for (let k = 0; k < keys; k++)
      ids.push(await rows.deadLetter({ name: job.name, payload: { k: `${prefix}k${k}`, n }, attempts: 3 }))
  return ids
}

type Retry = Awaited<ReturnType<Sluice['deadLetters']['retry']>>

/** A deterministic shuffle, so that racing calls do not arrive in seeding order. */
function shuffled<T>(items: readonly T[], seed = 7): T[] {
  const out = [...items]
  let x = seed
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    const j = x % (i + 1)
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** Runs `calls` on the racing connections, as many at once as there are connections. */
function race<R>(clients: readonly Sluice[], calls: readonly ((s: Sluice) => Promise<R>)[]): Promise<R[]> {
  return Promise.all(calls.map((call, i) => call(clients[i % clients.length]!)))
}

const byId = (ids: readonly string[]): string[] => [...ids].sort((a, b) => Number(a) - Number(b))

function merged(results: readonly Retry[]): { requeued: string[]; kept: { id: string; reason: string }[] } {
  return {
    requeued: results.flatMap((r) => r.requeued),
    kept: results.flatMap((r) => r.kept),
  }
}

test('200 racing retries of dead letters sharing until-executed keys: none lost, one job per key', async () => {
  env = await makeSluice({ jobs: [job] })
  const ids = await seed(env, 20, 10)
  const before = await counts(env)
  expect(before).toMatchObject({ deadLetters: 200, jobs: 0 })
  const clients = connections({ jobs: [job] }, CONNECTIONS)

  const results = await race(
    clients,
    shuffled(ids).map((id) => (s: Sluice) => s.deadLetters.retry(id)),
  )

  const after = await counts(env)
  console.log('racing single retries', { before: total(before), after: total(after), ...after })
  expect(total(after)).toBe(total(before))
  expect(after.perKeyMax).toBe(1)
  expect(after).toMatchObject({ jobs: 20, deadLetters: 180, keysWithJobs: 20 })
  const { requeued, kept } = merged(results)
  expect(requeued).toHaveLength(20)
  expect(kept).toHaveLength(180)
  // Every id is answered once, as requeued or kept; the kept ones are the dead letters left.
  expect(byId([...requeued, ...kept.map((k) => k.id)])).toEqual(byId(ids))
  const left = await env.sql<{ id: string }>('SELECT id::text AS id FROM $schema.dead_letters')
  expect(byId(left.map((r) => r.id))).toEqual(byId(kept.map((k) => k.id)))
  const holders = new Map(
    (
      await env.sql<{ k: string; id: string }>(`SELECT payload->>'k' AS k, id::text AS id FROM $schema.jobs`)
    ).map((r) => [r.k, r.id]),
  )
  const payloads = new Map(
    (
      await env.sql<{ id: string; k: string }>(
        `SELECT id::text AS id, payload->>'k' AS k FROM $schema.dead_letters`,
      )
    ).map((r) => [r.id, r.k]),
  )
  for (const k of kept) {
    const key = payloads.get(k.id)!
    expect(k.reason).toBe(`unique key sync:${key} held by job ${holders.get(key)}`)
  }
})

/** An enqueue of key `k` racing the retries; true when it wrote a job. */
const enqueueKey = (k: string) => async (s: Sluice) => {
  const r = await s.enqueue(job, { k, n: -1 }).catch((error: unknown) => {
    if ((error as { code?: string }).code === 'CONFLICT') return { status: 'duplicate' }
    throw error
  })
  return r.status === 'enqueued'
}

/**
 * Resolves once a statement of this test's schema that mentions `fn` waits for a lock; fails if
 * `work` settles first.
 */
async function waitsOnLock(e: TestSluice, fn: string, work: Promise<unknown>): Promise<void> {
  let settled = false
  const done = () => {
    settled = true
  }
  work.then(done, done)
  const end = Date.now() + 20_000
  for (;;) {
    const rows = await e.sql(
      `SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE NOT l.granted AND position($1 in a.query) > 0`,
      [`"${e.schema}".${fn}`],
    )
    if (rows.length > 0) return
    if (settled) throw new Error(`${fn} finished without waiting on a lock`)
    if (Date.now() > end) throw new Error(`${fn} never waited on a lock`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

test('a retry whose key is taken by an enqueue committing while it runs keeps its dead letter', async () => {
  env = await makeSluice({ jobs: [job] })
  const ids = await seed(env, 10, 1, 'held-')
  const before = await counts(env)
  const [retrier] = connections({ jobs: [job] }, 1)
  const holder = new pg.Client({ connectionString: databaseUrl })
  await holder.connect()
  const results: Retry[] = []
  try {
    for (const [k, id] of ids.entries()) {
      // The enqueue has taken the key but not committed: the retry cannot see it yet, and its
      // own insert of the key waits for it.
      await holder.query('BEGIN')
      await env.sluice.enqueue(job, { k: `held-k${k}`, n: -1 }, { tx: holder })
      const retry = retrier!.deadLetters.retry(id)
      await waitsOnLock(env, 'requeue_dead_letters', retry)
      await holder.query('COMMIT')
      results.push(await retry)
    }
  } finally {
    await holder.end()
  }
  const after = await counts(env)
  console.log('retries behind a held enqueue', {
    before: total(before),
    enqueued: 10,
    after: total(after),
    ...after,
  })
  expect(total(after)).toBe(total(before) + 10)
  expect(after).toMatchObject({ jobs: 10, deadLetters: 10, perKeyMax: 1 })
  const { requeued, kept } = merged(results)
  expect(requeued).toEqual([])
  expect(kept.map((k) => k.id)).toEqual(ids)
  for (const k of kept) expect(k.reason).toMatch(/^unique key sync:held-k\d+ held by job \d+$/)
})

test('retries racing enqueues of the same keys: none lost, one job per key', async () => {
  env = await makeSluice({ jobs: [job] })
  const clients = connections({ jobs: [job] }, CONNECTIONS)
  let seeded = 0
  let enqueued = 0
  const retries: Retry[] = []
  // Rounds of 40 keys, each with one dead letter, its retry and three enqueues of its key.
  for (let round = 0; round < 3; round++) {
    const ids = await seed(env, 40, 1, `r${round}-`)
    seeded += ids.length
    const outcomes = await race(
      clients,
      shuffled<(s: Sluice) => Promise<Retry | boolean>>(
        [
          ...ids.map((id) => (s: Sluice) => s.deadLetters.retry(id)),
          ...[0, 1, 2].flatMap(() => Array.from({ length: 40 }, (_, k) => enqueueKey(`r${round}-k${k}`))),
        ],
        round + 1,
      ),
    )
    enqueued += outcomes.filter((o) => o === true).length
    retries.push(...outcomes.filter((o): o is Retry => typeof o === 'object'))
  }

  const after = await counts(env)
  console.log('retries racing enqueues', { before: seeded, enqueued, after: total(after), ...after })
  expect(total(after)).toBe(seeded + enqueued)
  expect(after.perKeyMax).toBe(1)
  expect(after.keysWithJobs).toBe(120)
  const { requeued, kept } = merged(retries)
  expect(requeued.length + enqueued).toBe(120)
  expect(kept).toHaveLength(after.deadLetters)
})

test('bulk retries by filter racing each other, single retries and enqueues: none lost, one job per key', async () => {
  env = await makeSluice({ jobs: [job] })
  const clients = connections({ jobs: [job] }, CONNECTIONS)
  let seeded = 0
  let enqueued = 0
  const retries: Retry[] = []
  // Rounds of 60 dead letters over 6 keys: bulk retries of every size, single retries of some
  // of the same dead letters, and enqueues of the keys.
  for (let round = 0; round < 4; round++) {
    const ids = await seed(env, 6, 10, `b${round}-`)
    seeded += ids.length
    const bulk = (limit: number) => (s: Sluice) => s.deadLetters.retry({ name: job.name, limit })
    const outcomes = await race(
      clients,
      shuffled<(s: Sluice) => Promise<Retry | boolean>>(
        [
          ...[1000, 30, 10, 5, 2, 1].map(bulk),
          ...ids.slice(0, 20).map((id) => (s: Sluice) => s.deadLetters.retry(id)),
          ...Array.from({ length: 6 }, (_, k) => enqueueKey(`b${round}-k${k}`)),
        ],
        round + 11,
      ),
    )
    enqueued += outcomes.filter((o) => o === true).length
    retries.push(...outcomes.filter((o): o is Retry => typeof o === 'object'))
  }

  const after = await counts(env)
  console.log('bulk retries racing', { before: seeded, enqueued, after: total(after), ...after })
  expect(total(after)).toBe(seeded + enqueued)
  expect(after.perKeyMax).toBe(1)
  expect(after.keysWithJobs).toBe(24)
  const { requeued } = merged(retries)
  expect(new Set(requeued).size).toBe(requeued.length)
  expect(requeued.length + enqueued).toBe(24)
})

test('over the admin API, two retries of dead letters sharing a key at once: one requeued, one kept, in 10 rounds of 10', async () => {
  env = await makeSluice({ jobs: [job] })
  const [a, b] = connections({ jobs: [job] }, 2).map((s) => createApp(s, { env: testEnv, onError: () => {} }))
  const before = await counts(env)
  let seeded = 0
  for (let round = 0; round < 10; round++) {
    const ids = await seed(env, 1, 2, `http${round}-`)
    seeded += ids.length
    const bodies = await Promise.all(
      [a!, b!].map(async (app, i) => {
        const res = await postJson(app, '/api/v1/dead-letters/retry', { ids: [ids[i]] })
        expect(res.status).toBe(200)
        return (await res.json()) as Retry & { ids: string[] }
      }),
    )
    const { requeued, kept } = merged(bodies)
    expect(requeued).toHaveLength(1)
    expect(kept).toHaveLength(1)
    const [holder] = await env.sql<{ id: string }>(
      `SELECT id::text AS id FROM $schema.jobs WHERE payload->>'k' = $1`,
      [`http${round}-k0`],
    )
    expect(kept[0]).toEqual({
      id: ids.find((id) => id !== requeued[0]),
      reason: `unique key sync:http${round}-k0 held by job ${holder!.id}`,
    })
    for (const body of bodies) expect(body.ids).toEqual(body.requeued)
  }
  const after = await counts(env)
  expect(total(after)).toBe(total(before) + seeded)
  expect(after).toMatchObject({ jobs: 10, deadLetters: 10, perKeyMax: 1 })
})
