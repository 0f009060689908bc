/**
 * The dashboard's controls over many jobs: purgeQueue, bulk retryJobs / cancelJobs by filter,
 * triggerRecurring (with inspect.recurring()), through the API and the admin routes: what each
 * takes and leaves, what goes with a deleted job (uniqueness lock, concurrency slot), bad input.
 */
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import * as z from 'zod'
import { ConflictError, defineJob, defineRecurring, NotFoundError, ValidationError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer } from '../helpers/http.js'
import { type RowFactory, rowFactory } from '../helpers/rows.js'

const input = z.object({ n: z.number().default(0) })
const mail = defineJob({
  name: 'mail',
  queue: 'mail',
  input,
  retry: { maxAttempts: 3, baseDelayMs: 3_600_000, jitter: 0 },
  unique: { key: (i) => `mail:${i.n}` },
  run: async (i) => {
    if (i.n < 0) throw new Error('bounced')
  },
})
const report = defineJob({
  name: 'report',
  queue: 'mail',
  input,
  concurrency: { limit: 1, key: () => 'shared' },
  run: async () => {},
})
const other = defineJob({
  name: 'other',
  queue: 'other',
  input,
  concurrency: { limit: 1, key: () => 'shared' },
  run: async () => {},
})
const nightly = defineRecurring({ name: 'nightly', cron: '0 3 * * *', job: mail, input: { n: 99 } })

let t: TestSluice
let rows: RowFactory
let app: Hono
beforeAll(async () => {
  t = await makeSluice({ jobs: [mail, report, other], recurring: [nightly] })
  rows = rowFactory(t.admin, `"${t.schema}"`)
  app = appFor(t)
})
afterAll(() => t.cleanup())

const count = async (sql: string, values: unknown[] = []): Promise<number> =>
  Number((await t.sql<{ n: string }>(sql, values))[0]!.n)

describe('purgeQueue', () => {
  test("deletes the queue's waiting and blocked jobs with their locks and slots; running and batch jobs stay", async () => {
    await t.sluice.enqueue(mail, { n: 1 })
    await t.sluice.enqueue(mail, { n: 2 }, { delay: 3_600_000 })
    // The report job takes the key's only slot; the other queue's job is blocked behind it.
    await t.sluice.enqueue(report, {})
    const waitingOther = await t.sluice.enqueue(other, {})
    await t.sluice.enqueue(report, {})
    const running = await rows.leased('inv-1', { queue: 'mail', name: 'mail' })
    const batch = await t.sluice.createBatch()
    const inBatch = await t.sluice.enqueue(mail, { n: 3 }, { batch: batch.id })

    expect(await count(`SELECT count(*) AS n FROM $schema.unique_locks`)).toBe(3)
    expect(await count(`SELECT count(*) AS n FROM $schema.blocked`)).toBe(2)
    t.statements.reset()
    // Two mail jobs, the report job holding the slot, the report job blocked.
    expect(await t.sluice.purgeQueue('mail')).toBe(4)
    expect(t.statements.count).toBe(1)

    const left = await t.sql<{ id: string }>(
      `SELECT id::text FROM $schema.jobs WHERE queue = 'mail' ORDER BY id`,
    )
    expect(left.map((r) => r.id)).toEqual([running.id, inBatch.id])
    // Only the batch job's uniqueness lock is left.
    expect(await count(`SELECT count(*) AS n FROM $schema.unique_locks`)).toBe(1)
    // The slot came back and went to the other queue's blocked job, promoted into jobs.
    expect(await count(`SELECT count(*) AS n FROM $schema.blocked`)).toBe(0)
    expect(await count(`SELECT count(*) AS n FROM $schema.jobs WHERE id = $1`, [waitingOther.id])).toBe(1)
    expect(await count(`SELECT value AS n FROM $schema.semaphores WHERE key = 'shared'`)).toBe(1)
    // Nothing left to take.
    expect(await t.sluice.purgeQueue('mail')).toBe(0)
  })

  test('bad input is refused before anything is sent', async () => {
    t.statements.reset()
    await expect(t.sluice.purgeQueue('no such queue!')).rejects.toBeInstanceOf(ValidationError)
    await expect(t.sluice.purgeQueue('mail', { limit: 0 })).rejects.toBeInstanceOf(ValidationError)
    expect(t.statements.count).toBe(0)
  })
})

describe('retryJobs and cancelJobs by filter', () => {
  test('retry makes failed jobs due now; cancel deletes the matching waiting ones, up to the limit', async () => {
    await t.sql(`DELETE FROM $schema.jobs; DELETE FROM $schema.unique_locks`)
    const failedA = await t.sluice.enqueue(mail, { n: -1 })
    const failedB = await t.sluice.enqueue(mail, { n: -2 })
    await t.sluice.drain({ queues: ['mail'] })
    const fresh = await t.sluice.enqueue(mail, { n: 5 }, { delay: 3_600_000 })

    // `after` goes on where a previous chunk stopped: ids above it only.
    expect(await t.sluice.retryJobs({ queue: 'mail', after: failedA.id! })).toEqual([failedB.id])
    expect(await t.sluice.retryJobs({ queue: 'mail' })).toEqual([failedA.id, failedB.id])
    const due = await t.sql<{ id: string }>(
      `SELECT id::text FROM $schema.jobs WHERE run_at <= now() AND attempts = 1 ORDER BY id`,
    )
    expect(due.map((r) => r.id)).toEqual([failedA.id, failedB.id])

    // Due now, they are waiting (a job is retrying while its next attempt is not due yet).
    expect(await t.sluice.cancelJobs({ queue: 'mail', state: 'retrying' })).toEqual([])
    expect(await t.sluice.cancelJobs({ queue: 'mail', state: 'waiting', limit: 1 })).toEqual([failedA.id])
    expect(await t.sluice.cancelJobs({ name: 'mail', state: 'scheduled' })).toEqual([fresh.id])
    const left = await t.sql<{ id: string }>(`SELECT id::text FROM $schema.jobs WHERE queue = 'mail'`)
    expect(left.map((r) => r.id)).toEqual([failedB.id])
  })

  test('an empty filter, a running state or a bad limit is refused and changes nothing', async () => {
    t.statements.reset()
    await expect(t.sluice.cancelJobs({})).rejects.toThrow(/at least one of queue, name, state/)
    await expect(t.sluice.retryJobs({})).rejects.toBeInstanceOf(ValidationError)
    await expect(t.sluice.cancelJobs({ state: 'running' as 'waiting' })).rejects.toBeInstanceOf(
      ValidationError,
    )
    await expect(t.sluice.cancelJobs({ queue: 'mail', limit: 10_001 })).rejects.toBeInstanceOf(
      ValidationError,
    )
    await expect(t.sluice.cancelJobs({ queue: 'mail', after: '-1' })).rejects.toBeInstanceOf(ValidationError)
    expect(t.statements.count).toBe(0)
  })
})

describe('triggerRecurring and inspect.recurring()', () => {
  test('enqueues the job now, recorded as a manual run; the schedule is left as it was', async () => {
    await t.sluice.maintain()
    const [before] = await t.sql<{ last_slot: Date }>(
      `SELECT last_slot FROM $schema.recurring WHERE name = 'nightly'`,
    )
    const run = await t.sluice.triggerRecurring('nightly')
    expect(run).toMatchObject({ status: 'enqueued', id: expect.any(String) })
    const job = await t.sluice.inspect.job(run.id!)
    expect(job).toMatchObject({ name: 'mail', payload: { n: 99 } })
    const [after] = await t.sql<{ last_slot: Date }>(
      `SELECT last_slot FROM $schema.recurring WHERE name = 'nightly'`,
    )
    expect(after!.last_slot).toEqual(before!.last_slot)

    const runs = await t.sluice.inspect.recurringRuns('nightly')
    expect(runs[0]).toMatchObject({ jobId: run.id, status: 'enqueued', manual: true })

    t.statements.reset()
    const tasks = await t.sluice.inspect.recurring()
    expect(t.statements.count).toBe(1)
    expect(tasks).toEqual([
      expect.objectContaining({
        task: 'nightly',
        cron: '0 3 * * *',
        job: 'mail',
        lastRun: expect.objectContaining({ jobId: run.id, manual: true, outcome: 'waiting' }),
      }),
    ])
    // The next slot is 03:00 UTC after the last one.
    const next = tasks[0]!.nextSlot!
    expect(next.getUTCHours()).toBe(3)
    expect(next.getTime()).toBeGreaterThan(new Date(tasks[0]!.lastSlot).getTime())
    // A second trigger while the first job is queued: its unique key raises, nothing is recorded.
    await expect(t.sluice.triggerRecurring('nightly')).rejects.toBeInstanceOf(ConflictError)
    expect(await t.sluice.inspect.recurringRuns('nightly')).toHaveLength(runs.length)
  })

  test('an unknown task is NOT_FOUND', async () => {
    await expect(t.sluice.triggerRecurring('weekly')).rejects.toBeInstanceOf(NotFoundError)
  })
})

describe('the admin routes', () => {
  const post = (path: string, body?: unknown, a: Hono = app) =>
    a.request(`/api/v1${path}`, {
      method: 'POST',
      headers: { ...bearer(), 'Content-Type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    })

  test('answer, and refuse bad input with 400 and a read-only API with 403', async () => {
    const purge = await post('/queues/mail/purge', {})
    expect(purge.status).toBe(200)
    expect(await purge.json()).toEqual({ purged: expect.any(Number) })
    expect((await post('/queues/mail/purge', { limit: 0 })).status).toBe(400)
    expect((await post('/queues/nope/purge', {})).status).toBe(404)
    expect((await post('/jobs/cancel', {})).status).toBe(400)
    expect((await post('/jobs/retry', { queue: 'mail', state: 'running' })).status).toBe(400)
    expect((await post('/jobs/retry', { queue: 'mail' })).status).toBe(200)
    expect((await post('/recurring/weekly/trigger')).status).toBe(404)
    expect((await post('/recurring/bad name!/trigger')).status).toBe(400)
    const tasks = await app.request('/api/v1/recurring/tasks', { headers: bearer() })
    expect(tasks.status).toBe(200)

    const readOnly = appFor(t, { admin: { readOnly: true } })
    const jobs = await count(`SELECT count(*) AS n FROM $schema.jobs`)
    for (const [path, body] of [
      ['/queues/mail/purge', {}],
      ['/jobs/cancel', { queue: 'mail' }],
      ['/jobs/retry', { queue: 'mail' }],
      ['/recurring/nightly/trigger', undefined],
    ] as const) {
      expect((await post(path, body, readOnly)).status, path).toBe(403)
    }
    expect(await count(`SELECT count(*) AS n FROM $schema.jobs`)).toBe(jobs)
  })
})
