import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { exampleJobs } from '../../examples/jobs.js'
import { setup } from '../../examples/schema.js'
import { sign } from '../../src/crypto/signature.js'
import { buildToTemp, setEnv, type TempBuild } from '../helpers/build.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'
import { httpEventV2, type LambdaHttpResult, lambdaContext, scheduledEvent } from '../helpers/lambda.js'

/** The example's welcome-email job, for the tests' own Sluice (the bundles run their own copy). */
const { welcomeEmail } = exampleJobs(() => env.sluice.db())

type HttpHandler = (event: unknown, context: unknown) => Promise<LambdaHttpResult>
type MaintainHandler = (
  event: unknown,
  context: unknown,
) => Promise<{ ranAt: string; tasks: { task: string; ran: boolean }[] }>

const SECRET = 'lambda-test-secret-0123456789'
const auth = { authorization: `Bearer ${SECRET}` }

let env: TestSluice
let built: TempBuild
let restoreEnv: () => void
let drain: HttpHandler
let maintain: MaintainHandler
let api: HttpHandler

beforeAll(async () => {
  env = await makeSluice({ jobs: [welcomeEmail] })
  // The bundled functions serve the example app, whose handlers write to its own tables.
  await setup(env.sluice)
  built = await buildToTemp({
    functions: ['functions/aws/drain.ts', 'functions/aws/maintain.ts', 'functions/aws/api.ts'],
  })
  // The bundles read their configuration from the environment when they load, as on Lambda.
  restoreEnv = setEnv({ DATABASE_URL: databaseUrl, SLUICE_SCHEMA: env.schema, SLUICE_SECRET: SECRET })
  drain = (await built.load<{ handler: HttpHandler }>('functions/aws/drain.mjs')).handler
  maintain = (await built.load<{ handler: MaintainHandler }>('functions/aws/maintain.mjs')).handler
  api = (await built.load<{ handler: HttpHandler }>('functions/aws/api.mjs')).handler
})
afterAll(async () => {
  restoreEnv?.()
  await built?.remove()
  await env?.cleanup()
})

const jobs = () =>
  env.sql<{ attempts: number; leased: boolean; due: boolean }>(
    'SELECT attempts, lease_token IS NOT NULL AS leased, run_at <= now() AS due FROM $schema.jobs ORDER BY id',
  )

describe('bundled drain handler (function URL, payload 2.0)', () => {
  test('stops at the deadline Lambda reports; jobs longer than the time left still start at the opening', async () => {
    await env.sql('DELETE FROM $schema.jobs')
    const inputs = [1, 2, 3].map((n) => ({ userId: `u${n}`, email: `u${n}@example.com` }))
    await env.sluice.enqueueMany(welcomeEmail, inputs)
    const body = JSON.stringify({ queues: ['emails'] })
    // No time left at all: nothing is claimed.
    const none = await drain(
      httpEventV2('POST', '/drain', {
        body,
        headers: await sign(SECRET, { method: 'POST', path: '/drain', body }),
      }),
      lambdaContext(0),
    )
    expect(JSON.parse(none.body)).toMatchObject({ claimed: 0, stoppedBy: 'deadline' })
    expect(await jobs()).toEqual(Array(3).fill({ attempts: 0, leased: false, due: true }))
    // welcome-email may take 10 s; the invocation has 1.5 s left: the drain's opening wave
    // starts them all the same (their signal set at the deadline) rather than leaving them to
    // wait for an invocation longer than any this function gets.
    const result = await drain(
      httpEventV2('POST', '/drain', {
        body,
        headers: await sign(SECRET, { method: 'POST', path: '/drain', body }),
      }),
      lambdaContext(1_500),
    )
    expect(result.statusCode).toBe(200)
    const summary = JSON.parse(result.body)
    expect(summary).toMatchObject({ claimed: 3, completed: 3, handedBack: 0 })
    expect(summary.durationMs).toBeLessThan(1_500)
    expect(await jobs()).toEqual([])
  })

  test('runs the jobs when the invocation has time, whatever path the function URL was called on', async () => {
    const inputs = [4, 5, 6].map((n) => ({ userId: `u${n}`, email: `u${n}@example.com` }))
    await env.sluice.enqueueMany(welcomeEmail, inputs)
    const result = await drain(httpEventV2('POST', '/', { body: '{}', headers: auth }), lambdaContext(30_000))
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toMatchObject({ completed: 3, handedBack: 0, stoppedBy: 'empty' })
    expect(await jobs()).toEqual([])
  })

  test('refuses requests without credentials', async () => {
    const result = await drain(httpEventV2('POST', '/drain', { body: '{}' }), lambdaContext(30_000))
    expect(result.statusCode).toBe(401)
    expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'UNAUTHORIZED' } })
  })
})

describe('bundled maintain handler (EventBridge schedule)', () => {
  test('returns the maintenance report; a duplicate delivery runs nothing twice', async () => {
    const [first, second] = await Promise.all([
      maintain(scheduledEvent(), lambdaContext(60_000, 'sluice-dev-maintain')),
      maintain(scheduledEvent(), lambdaContext(60_000, 'sluice-dev-maintain')),
    ])
    const names = first!.tasks.map((t) => t.task)
    expect(names).toEqual(expect.arrayContaining(['bury-exhausted', 'prune-archive', 'reap-invocations']))
    expect(new Date(first!.ranAt).getTime()).toBeGreaterThan(Date.now() - 60_000)
    // Every task was due on the fresh schema: each ran in exactly one of the two deliveries.
    const runs = names.map(
      (name) => [first!, second!].filter((r) => r.tasks.find((t) => t.task === name)?.ran).length,
    )
    expect(runs).toEqual(names.map(() => 1))
  })
})

describe('bundled API handler (HTTP API)', () => {
  test('enqueues, answers health checks and validates input', async () => {
    const body = JSON.stringify({ input: { userId: 'u9', email: 'u9@example.com' } })
    const created = await api(
      httpEventV2('POST', '/jobs/welcome-email', { body, headers: auth }),
      lambdaContext(29_000),
    )
    expect(created.statusCode).toBe(202)
    expect(JSON.parse(created.body)).toEqual({ id: expect.stringMatching(/^\d+$/), status: 'enqueued' })
    const bad = await api(
      httpEventV2('POST', '/jobs/welcome-email', {
        body: JSON.stringify({ input: { userId: 'u9' } }),
        headers: auth,
      }),
      lambdaContext(29_000),
    )
    expect(bad.statusCode).toBe(400)
    expect(JSON.parse(bad.body).error.issues[0].path).toEqual(['input', 'email'])
    const health = await api(httpEventV2('GET', '/health'), lambdaContext(29_000))
    expect(health.statusCode).toBe(200)
    expect(JSON.parse(health.body)).toMatchObject({ ok: true })
    expect(await env.sql("SELECT payload->>'userId' AS who FROM $schema.jobs")).toEqual([{ who: 'u9' }])
  })
})
