import { afterEach, expect, test } from 'vitest'
import { z } from 'zod'
import { createSluice, type Db, defineJob, fromPg, type Sluice } from '../../src/index.js'
import { pgPool, uniqueSchema } from '../helpers/db.js'
import { mostAtOnce, type Span } from '../helpers/overlap.js'

/**
 * One drain starts jobs in the order the claim defines (lower priority numbers first, then due
 * time, then enqueue order) at any pipeline depth: claims sent ahead together may be filled by
 * the server in either order, and the drain must not run a later claim's jobs before an earlier
 * one's. Jobs are enqueued one at a time in random order at three priorities; the handler records
 * the order in which they start.
 */

/** Holds each statement for `delay()` ms before sending it, and records settle-and-claim spans. */
function network(db: Db, spans: Span[], delay: () => number): Db {
  return {
    ...db,
    async query(statement) {
      const from = performance.now()
      const ms = delay()
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms))
      try {
        return await db.query(statement)
      } finally {
        if (/\.settle\(/.test(statement.text) && /\.claim\(|relay_and_claim/.test(statement.text)) {
          spans.push({ from, to: performance.now() })
        }
      }
    },
  }
}

const PRIORITIES = [0, 16384, 32767]
/** Start order: each job's (priority, enqueue sequence). */
const started: { priority: number; seq: number }[] = []
const job = defineJob({
  name: 'ordered-work',
  input: z.object({ seq: z.number(), priority: z.number() }),
  run: ({ seq, priority }) => {
    started.push({ priority, seq })
  },
})

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
  started.length = 0
})

async function setUp(delay: () => number): Promise<{ sluice: Sluice; direct: Sluice; spans: Span[] }> {
  const schema = uniqueSchema('order')
  const pool = pgPool(8)
  const admin = pgPool(1)
  const spans: Span[] = []
  const options = { schema, jobs: [job], drain: { batchSize: 5, concurrency: 1 } }
  const sluice = createSluice({ ...options, database: network(fromPg(pool), spans, delay) })
  const direct = createSluice({ ...options, database: fromPg(pool) })
  await direct.migrate()
  close = async () => {
    await sluice.close()
    await direct.close()
    await pool.end()
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    await admin.end()
  }
  return { sluice, direct, spans }
}

/** Enqueues `n` jobs one at a time, in random order over the priorities. */
async function enqueueShuffled(direct: Sluice, n: number): Promise<void> {
  for (let seq = 0; seq < n; seq++) {
    const priority = PRIORITIES[Math.floor(Math.random() * PRIORITIES.length)]!
    await direct.enqueue(job, { seq, priority }, { priority })
  }
}

/** How many jobs started after a job that the claim orders after them had started. */
function outOfOrder(): number {
  let late = 0
  let highest: { priority: number; seq: number } | undefined
  for (const s of started) {
    if (
      highest &&
      (s.priority < highest.priority || (s.priority === highest.priority && s.seq < highest.seq))
    )
      late++
    else highest = s
  }
  return late
}

test('over a distant, jittery network, claims in flight together still start their jobs in claim order', async () => {
  // Far enough that a round trip's network share outlasts a batch's run and the statement's time
  // on a loaded server together: the drain then claims ahead with more than one claim in flight.
  const { sluice, direct, spans } = await setUp(() => 50 + Math.random() * 40)
  const n = 400
  await enqueueShuffled(direct, n)
  const summary = await sluice.drain({ budgetMs: 120_000 })
  expect(summary).toMatchObject({ claimed: n, completed: n, stoppedBy: 'empty' })
  expect(started).toHaveLength(n)
  expect(outOfOrder()).toBe(0)
  // The network made the drain send claims ahead together, or the test proves nothing.
  expect(mostAtOnce(spans)).toBeGreaterThanOrEqual(2)
}, 240_000)

test('over a near database, a drain keeps one claim in flight and starts jobs in claim order', async () => {
  const { sluice, direct, spans } = await setUp(() => 0)
  const n = 2000
  await enqueueShuffled(direct, n)
  const summary = await sluice.drain({ budgetMs: 120_000 })
  expect(summary).toMatchObject({ claimed: n, completed: n, stoppedBy: 'empty' })
  expect(outOfOrder()).toBe(0)
  expect(spans.length).toBeGreaterThan(100)
  expect(mostAtOnce(spans)).toBe(1)
}, 240_000)
