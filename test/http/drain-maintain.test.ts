import type { Context, Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import {
  createApp,
  createSluice,
  type DrainSummary,
  defineJob,
  fromPg,
  type MaintenanceReport,
} from '../../src/index.js'
import { migrations } from '../../src/migrate/migrations.generated.js'
import { migrate } from '../../src/migrate/run.js'
import { databaseUrl, makeSluice, pgPool, type TestSluice, uniqueSchema } from '../helpers/db.js'
import { appFor, bearer, CRON_SECRET, countJobs, errorOf, postJson, testEnv } from '../helpers/http.js'

const seen: string[] = []
const greet = defineJob({
  name: 'greet',
  input: z.object({ who: z.string() }),
  run: (input) => {
    seen.push(input.who)
  },
})

describe('POST /drain and /maintain', () => {
  let t: TestSluice
  let app: Hono
  let remaining: number | undefined
  const contexts: Context[] = []

  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet] })
    app = appFor(t, {
      remainingMs: (c) => {
        contexts.push(c)
        return remaining
      },
    })
  })
  afterAll(() => t.cleanup())
  beforeEach(async () => {
    await t.sql('DELETE FROM $schema.jobs')
    seen.length = 0
    remaining = undefined
    contexts.length = 0
  })

  test('drain over HTTP runs the jobs and answers the summary', async () => {
    for (const who of ['ada', 'bo', 'cy']) {
      expect((await postJson(app, '/jobs/greet', { input: { who } })).status).toBe(202)
    }
    const res = await postJson(app, '/drain', { queues: ['default'], maxJobs: 10 })
    expect(res.status).toBe(200)
    const summary = (await res.json()) as DrainSummary
    expect(summary).toMatchObject({ queues: ['default'], claimed: 3, completed: 3, failed: 0 })
    expect(summary.stoppedBy).toBe('empty')
    expect(seen.sort()).toEqual(['ada', 'bo', 'cy'])
    expect(await countJobs(t)).toBe(0)
    expect(contexts).toHaveLength(1)
  })

  test('an empty body drains with the defaults', async () => {
    await t.sluice.enqueue(greet, { who: 'dee' })
    const res = await app.request('/drain', { method: 'POST', headers: bearer() })
    expect(res.status).toBe(200)
    expect(((await res.json()) as DrainSummary).completed).toBe(1)
    expect(seen).toEqual(['dee'])
  })

  test("the platform's remaining time caps the budget", async () => {
    await t.sluice.enqueue(greet, { who: 'late' })
    remaining = 0
    const res = await postJson(app, '/drain', {})
    const summary = (await res.json()) as DrainSummary
    // No time left: nothing is claimed at all.
    expect(summary).toMatchObject({ claimed: 0, completed: 0, stoppedBy: 'deadline' })
    expect(seen).toEqual([])
    expect(await countJobs(t)).toBe(1)
  })

  test.each([
    [{ budgetMs: -1 }, 'budgetMs'],
    [{ queues: ['bad name!'] }, 'queues'],
    [{ platformRemainingMs: 10 }, ''],
    [{ batchSize: 5 }, ''],
  ])('400 for a bad drain body %j', async (body, key) => {
    const res = await postJson(app, '/drain', body)
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    if (key) expect(error.issues?.[0]?.path[0]).toBe(key)
  })

  test('maintain via POST with the bearer token', async () => {
    const res = await app.request('/maintain', { method: 'POST', headers: bearer() })
    expect(res.status).toBe(200)
    const report = (await res.json()) as MaintenanceReport
    expect(report.tasks.map((task) => task.task)).toContain('reap-invocations')
  })

  test('maintain via GET the way Vercel cron calls it', async () => {
    await t.sql('DELETE FROM $schema.maintenance')
    const res = await app.request('/maintain', { headers: { Authorization: `Bearer ${CRON_SECRET}` } })
    expect(res.status).toBe(200)
    const report = (await res.json()) as MaintenanceReport
    expect(report.tasks.every((task) => task.ran)).toBe(true)
    // A duplicated cron delivery finds nothing due.
    const again = (await (
      await app.request('/maintain', { headers: { Authorization: `Bearer ${CRON_SECRET}` } })
    ).json()) as MaintenanceReport
    expect(again.tasks.some((task) => task.ran)).toBe(false)
  })

  test('the cron secret opens /maintain only', async () => {
    const cron = { Authorization: `Bearer ${CRON_SECRET}` }
    t.statements.reset()
    expect((await postJson(app, '/drain', {}, cron)).status).toBe(401)
    expect((await postJson(app, '/jobs/greet', { input: { who: 'x' } }, cron)).status).toBe(401)
    expect((await app.request('/metrics', { headers: cron })).status).toBe(401)
    expect(t.statements.count).toBe(0)
  })
})

describe('a database without Sluice migrations', () => {
  test('drain and enqueue answer MIGRATIONS_REQUIRED, saying to run sluice migrate', async () => {
    // Not migrated: the schema does not exist.
    const sluice = createSluice({ database: databaseUrl, schema: uniqueSchema('unmigrated'), jobs: [greet] })
    const reported: unknown[] = []
    const app = createApp(sluice, { env: testEnv, onError: (error) => reported.push(error) })
    try {
      for (const res of [
        await postJson(app, '/drain', {}),
        await postJson(app, '/jobs/greet', { input: { who: 'x' } }),
      ]) {
        expect(res.status).toBe(500)
        const error = await errorOf(res)
        expect(error.code).toBe('MIGRATIONS_REQUIRED')
        expect(error.message).toContain('run `sluice migrate`')
      }
      // The cause goes to the reporter, as for any 5xx.
      expect(reported).toHaveLength(2)
      expect(String(reported[0])).toContain('does not exist')
    } finally {
      await sluice.close()
    }
  })

  test('so do migrations older than the package (a function the drain calls is missing)', async () => {
    const schema = uniqueSchema('stale')
    const pool = pgPool(2)
    const sluice = createSluice({ database: fromPg(pool), schema, jobs: [greet] })
    try {
      await migrate(
        fromPg(pool),
        schema,
        migrations.filter((m) => m.version <= 20),
      )
      const app = createApp(sluice, { env: testEnv, onError: () => {} })
      // The enqueue's statement is the same at migration 20; the drain's needs what came after.
      expect((await postJson(app, '/jobs/greet', { input: { who: 'x' } })).status).toBe(202)
      const drained = await postJson(app, '/drain', {})
      expect(drained.status).toBe(500)
      expect(await errorOf(drained)).toMatchObject({ code: 'MIGRATIONS_REQUIRED' })
    } finally {
      await sluice.close()
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await pool.end()
    }
  })
})
