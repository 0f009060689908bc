import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { exampleJobs } from '../../examples/jobs.js'
import { setup } from '../../examples/schema.js'
import { ConfigError } from '../../src/index.js'
import { vercelHandlers } from '../../src/platforms/vercel.js'
import { buildToTemp, setEnv, type TempBuild } from '../helpers/build.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'

/** The example's welcome-email job, for the tests' own Sluice (the bundles run their own copy). */
const { welcomeEmail } = exampleJobs(() => env.sluice.db())

type Handler = (request: Request) => Promise<Response>

const SECRET = 'vercel-test-secret-0123456789'
const CRON_SECRET = 'vercel-cron-secret-0123456789'
const ORIGIN = 'https://sluice-example.vercel.app'

let env: TestSluice
let built: TempBuild
let restoreEnv: () => void
let GET: Handler
let POST: Handler

beforeAll(async () => {
  env = await makeSluice({ jobs: [welcomeEmail] })
  // The bundled functions serve the example app, whose handlers write to its own tables.
  await setup(env.sluice)
  built = await buildToTemp({
    functions: ['functions/vercel/sluice.ts', 'functions/vercel/drain.ts', 'functions/vercel/maintain.ts'],
  })
  restoreEnv = setEnv({
    DATABASE_URL: databaseUrl,
    SLUICE_SCHEMA: env.schema,
    SLUICE_SECRET: SECRET,
    CRON_SECRET,
    // What the build's Vercel output sets from the function's maxDuration; short here.
    SLUICE_MAX_DURATION_MS: '1500',
  })
  ;({ GET, POST } = await built.load<{ GET: Handler; POST: Handler }>('functions/vercel/sluice.mjs'))
})
afterAll(async () => {
  restoreEnv?.()
  await built?.remove()
  await env?.cleanup()
})

const post = (path: string, body: unknown, token = SECRET) =>
  POST(
    new Request(`${ORIGIN}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  )

describe('bundled Vercel route handlers', () => {
  test("Vercel cron's GET /api/maintain with CRON_SECRET returns the report", async () => {
    const res = await GET(
      new Request(`${ORIGIN}/api/maintain`, { headers: { authorization: `Bearer ${CRON_SECRET}` } }),
    )
    expect(res.status).toBe(200)
    const report = await res.json()
    expect(report.tasks.map((t: { task: string }) => t.task)).toEqual(
      expect.arrayContaining(['bury-exhausted', 'prune-archive', 'reap-invocations']),
    )
    const anonymous = await GET(new Request(`${ORIGIN}/api/maintain`))
    expect(anonymous.status).toBe(401)
    // The cron secret opens /maintain only.
    expect((await post('/api/drain', {}, CRON_SECRET)).status).toBe(401)
  })

  test('a drain stops at maxDuration less the time since the request arrived; its opening wave runs longer jobs', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    for (const n of [1, 2]) {
      const res = await post('/api/jobs/welcome-email', {
        input: { userId: `u${n}`, email: `u${n}@example.com` },
      })
      expect(res.status).toBe(202)
    }
    // welcome-email may take 10 s, the function has 1.5 s: the opening wave starts them anyway
    // (their signal set at the deadline) rather than leaving them to wait for a longer function.
    const res = await post('/api/drain', { queues: ['emails'] })
    expect(res.status).toBe(200)
    const summary = await res.json()
    expect(summary).toMatchObject({ claimed: 2, completed: 2, handedBack: 0 })
    expect(summary.durationMs).toBeLessThan(1_500)
    expect(await env.sql('SELECT attempts FROM $schema.jobs')).toEqual([])
  })

  test('unknown routes are JSON 404s', async () => {
    for (const path of ['/api/nope', '/elsewhere']) {
      const res = await GET(new Request(`${ORIGIN}${path}`))
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ error: { code: 'NOT_FOUND' } })
    }
  })
})

describe('the lean drain and maintenance functions (vercelDrain, vercelMaintain)', () => {
  test('the drain function drains at its own path, with the same authentication and the function limit', async () => {
    const lean = await built.load<{ POST: Handler }>('functions/vercel/drain.mjs')
    await env.sql('DELETE FROM $schema.jobs')
    for (const n of [1, 2])
      await env.sluice.enqueue(welcomeEmail, { userId: `d${n}`, email: `d${n}@example.com` })
    const drain = (token?: string) =>
      lean.POST(
        new Request(`${ORIGIN}/api/drain`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify({ queues: ['emails'] }),
        }),
      )
    expect((await drain()).status).toBe(401)
    expect((await drain(CRON_SECRET)).status).toBe(401)
    const res = await drain(SECRET)
    expect(res.status).toBe(200)
    const summary = await res.json()
    expect(summary).toMatchObject({ claimed: 2, completed: 2 })
    // SLUICE_MAX_DURATION_MS is 1.5 s here: the budget followed it.
    expect(summary.durationMs).toBeLessThan(1_500)
    const bad = await lean.POST(
      new Request(`${ORIGIN}/api/drain`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        body: '{"budgetMs":"soon"}',
      }),
    )
    expect(bad.status).toBe(400)
  })

  test('the maintenance function answers Vercel cron, and nobody else', async () => {
    const lean = await built.load<{ GET: Handler }>('functions/vercel/maintain.mjs')
    const res = await lean.GET(
      new Request(`${ORIGIN}/api/maintain`, { headers: { authorization: `Bearer ${CRON_SECRET}` } }),
    )
    expect(res.status).toBe(200)
    expect((await res.json()).tasks.map((t: { task: string }) => t.task)).toContain('prune-archive')
    expect((await lean.GET(new Request(`${ORIGIN}/api/maintain`))).status).toBe(401)
  })

  test('neither bundle carries the admin API, the OpenAPI document or the dashboard', async () => {
    for (const name of ['drain', 'maintain']) {
      const code = await readFile(join(built.outDir, `functions/vercel/${name}.mjs`), 'utf8')
      expect(code, name).not.toContain('/openapi.json')
      expect(code, name).not.toContain('dashboard')
      expect(code, name).not.toContain('/api/v1')
    }
    const api = await readFile(join(built.outDir, 'functions/vercel/sluice.mjs'), 'utf8')
    expect(api).toContain('/openapi.json')
  })
})

describe('vercelHandlers options', () => {
  test('an explicit maxDurationMs wins over the environment, and basePath moves the routes', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    await env.sluice.enqueue(welcomeEmail, { userId: 'u', email: 'u@example.com' })
    const handlers = vercelHandlers(env.sluice, {
      basePath: '/queue',
      maxDurationMs: 60_000,
      env: { SLUICE_SECRET: SECRET, SLUICE_MAX_DURATION_MS: '1000' },
    })
    const res = await handlers.POST(
      new Request(`${ORIGIN}/queue/drain`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}` },
      }),
    )
    expect(await res.json()).toMatchObject({ completed: 1, stoppedBy: 'empty' })
  })

  test('bad options fail at start-up; the environment is checked at the first request', async () => {
    const base = { env: { SLUICE_SECRET: SECRET } }
    expect(() => vercelHandlers(env.sluice, { ...base, maxDurationMs: -1 })).toThrow(ConfigError)
    expect(() => vercelHandlers(env.sluice, { ...base, basePath: 'api' })).toThrow(ConfigError)
    // A framework's build imports the route module with no environment: creating the handlers never throws.
    const reported: unknown[] = []
    const onError = (error: unknown) => reported.push(error)
    const badLimit = vercelHandlers(env.sluice, {
      env: { ...base.env, SLUICE_MAX_DURATION_MS: '60s' },
      onError,
    })
    const drain = () =>
      new Request(`${ORIGIN}/api/drain`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        body: '{}',
      })
    expect((await badLimit.POST(drain())).status).toBe(500)
    expect(String(reported.pop())).toMatch(/SLUICE_MAX_DURATION_MS/)
    const noSecret = vercelHandlers(env.sluice, { env: {}, onError })
    expect((await noSecret.POST(drain())).status).toBe(500)
    expect(String(reported.pop())).toMatch(/no secret: set SLUICE_SECRET/)
  })
})
