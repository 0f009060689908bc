import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { exampleJobs } from '../../examples/jobs.js'
import { setup } from '../../examples/schema.js'
import { buildToTemp, type TempBuild } from '../helpers/build.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'
import { forwardNeonSql, type NeonHttpServer, startNeonHttpServer } from '../support/neon-http-server.js'

/** The example's welcome-email job, for the tests' own Sluice (the bundles run their own copy). */
const { welcomeEmail } = exampleJobs(() => env.sluice.db())

const SECRET = 'edge-test-secret-0123456789'

/**
 * The bundle as Vercel's Edge runtime runs it: a default-exported `(request) => Response`
 * with the environment on `process.env`. Workers pass bindings as `env` instead, so this
 * wrapper (test-only) puts them where the bundle looks. No nodejs_compat flag.
 */
const WRAPPER = `import enqueue from './enqueue.js'
export default {
  fetch(request, env) {
    globalThis.process ??= { env }
    return enqueue(request)
  },
}
`

let env: TestSluice
let built: TempBuild
let server: NeonHttpServer
let mf: Miniflare
const outbound: string[] = []

beforeAll(async () => {
  env = await makeSluice({ jobs: [welcomeEmail] })
  // The bundled functions serve the example app, whose handlers write to its own tables.
  await setup(env.sluice)
  built = await buildToTemp({ functions: ['functions/vercel/enqueue.ts'] })
  server = await startNeonHttpServer({ connectionString: databaseUrl })
  mf = new Miniflare({
    modules: [
      { type: 'ESModule', path: 'worker.js', contents: WRAPPER },
      {
        type: 'ESModule',
        path: 'enqueue.js',
        contents: await readFile(join(built.outDir, 'functions/vercel/enqueue.js'), 'utf8'),
      },
    ],
    compatibilityDate: '2024-09-23',
    bindings: {
      // The driver posts to https://api.<host>/sql; the outbound service below sends it to the local endpoint.
      DATABASE_URL: 'postgres://sluice:sluice@db.sluice.test/sluice',
      SLUICE_SCHEMA: env.schema,
      SLUICE_SECRET: SECRET,
    },
    // Every fetch the worker makes comes here: Neon's SQL-over-HTTP requests go to the local endpoint.
    outboundService: async (request) => {
      const url = new URL(request.url)
      outbound.push(`${request.method} ${url.host}${url.pathname}`)
      return forwardNeonSql(request, server.url)
    },
  })
}, 60_000)
afterAll(async () => {
  await mf?.dispose()
  await server?.close()
  await built?.remove()
  await env?.cleanup()
})

const enqueue = (name: string, body: unknown, token: string | null = SECRET) =>
  mf.dispatchFetch(`https://sluice-example.vercel.app/api/enqueue/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  })

const rows = () =>
  env.sql<{ name: string; queue: string; payload: unknown }>('SELECT name, queue, payload FROM $schema.jobs')

describe('the edge bundle in workerd, over the Neon HTTP path', () => {
  test('enqueues into PostgreSQL', async () => {
    outbound.length = 0
    const res = await enqueue('welcome-email', {
      input: { userId: 'u1', email: 'u1@example.com' },
      priority: 3,
    })
    expect(res.status).toBe(202)
    const { id } = (await res.json()) as { id: string }
    expect(id).toMatch(/^\d+$/)
    expect(await rows()).toEqual([
      { name: 'welcome-email', queue: 'emails', payload: { userId: 'u1', email: 'u1@example.com' } },
    ])
    // One statement, one HTTP round trip.
    expect(outbound).toEqual(['POST api.sluice.test/sql'])
    // A drain on Node picks it up.
    expect(await env.sluice.drain({ queues: ['emails'] })).toMatchObject({ completed: 1 })
  })

  test('invalid input is a 400 with the issues, and nothing is written', async () => {
    outbound.length = 0
    const res = await enqueue('welcome-email', { input: { userId: '', email: 'not-an-email' } })
    expect(res.status).toBe(400)
    const body = (await res.json()) as {
      error: { code: string; message: string; issues: { path: unknown[]; message: string }[] }
    }
    expect(body.error.code).toBe('INVALID_INPUT')
    expect(body.error.issues.map((i) => i.path)).toEqual([
      ['input', 'userId'],
      ['input', 'email'],
    ])
    // The bundle has zod/mini only, which has no messages of its own: Sluice sets English ones.
    expect(body.error.message).toBe(
      'Invalid input for job "welcome-email" at input.userId: Too small: expected string to have >=1 characters',
    )
    expect(body.error.issues[1]?.message).toBe('Invalid email address')
    expect(outbound).toEqual([])
    expect(await rows()).toEqual([])
  })

  test('unknown jobs, missing credentials and bad envelopes change nothing', async () => {
    outbound.length = 0
    expect((await enqueue('nope', { input: {} })).status).toBe(404)
    expect(
      (await enqueue('welcome-email', { input: { userId: 'u', email: 'u@example.com' } }, null)).status,
    ).toBe(401)
    const extra = await enqueue('welcome-email', { input: { userId: 'u', email: 'u@example.com' }, tx: 1 })
    expect(extra.status).toBe(400)
    expect(outbound).toEqual([])
    expect(await rows()).toEqual([])
  })
})
