/**
 * The shipped Cloudflare Workers artifact: functions/cloudflare/wrangler.toml's `main` (the
 * build's worker bundle) served by workerd through Miniflare, with the toml's compatibility date
 * and no nodejs_compat. Every fetch the worker makes goes to the outbound service below: Neon's
 * SQL-over-HTTP to a local endpoint, the drain wake-up to a recorder.
 */
import { readFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { setup } from '../../examples/schema.js'
import { buildToTemp, root, type TempBuild } from '../helpers/build.js'
import { databaseUrl, makeSluice, type TestSluice } from '../helpers/db.js'
import { forwardNeonSql, type NeonHttpServer, startNeonHttpServer } from '../support/neon-http-server.js'

const SECRET = 'workers-test-secret-0123456789'
const DRAIN_URL = 'https://drain.sluice.test/drain'
const TOML = join(root, 'functions/cloudflare/wrangler.toml')

let env: TestSluice
let built: TempBuild
let server: NeonHttpServer
let mf: Miniflare
let toml: string
const wakes: string[] = []

const setting = (name: string) => new RegExp(`^${name}\\s*=\\s*"([^"]*)"`, 'm').exec(toml)?.[1]

beforeAll(async () => {
  env = await makeSluice({ jobs: [] })
  await setup(env.sluice)
  toml = await readFile(TOML, 'utf8')
  built = await buildToTemp({ functions: ['functions/cloudflare/worker.ts'] })
  server = await startNeonHttpServer({ connectionString: databaseUrl })
  // `main` is relative to the toml and points into dist/: the same file, built here.
  const main = relative(join(root, 'dist'), join(dirname(TOML), setting('main')!))
  mf = new Miniflare({
    modules: true,
    scriptPath: join(built.outDir, main),
    compatibilityDate: setting('compatibility_date')!,
    bindings: {
      DATABASE_URL: 'postgres://sluice:sluice@db.sluice.test/sluice',
      SLUICE_SCHEMA: env.schema,
      SLUICE_SECRET: SECRET,
      SLUICE_DRAIN_URL: DRAIN_URL,
    },
    outboundService: async (request) => {
      const url = new URL(request.url)
      if (url.href === DRAIN_URL) {
        wakes.push(await request.text())
        return new Response('{}', { status: 200 })
      }
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

describe('the Workers entry under workerd', () => {
  test('wrangler.toml deploys the built bundle as it is, with its source map', () => {
    expect(setting('main')).toBe('../../dist/functions/cloudflare/worker.js')
    expect(toml).toMatch(/^no_bundle = true$/m)
    expect(toml).toMatch(/^upload_source_maps = true$/m)
    expect(toml).not.toMatch(/nodejs_compat/)
  })

  test('answers an enqueue, writes the job and wakes the drain through ctx.waitUntil', async () => {
    const res = await mf.dispatchFetch('https://sluice-enqueue.example.workers.dev/jobs/welcome-email', {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { userId: 'u1', email: 'u1@example.com' } }),
    })
    expect(res.status).toBe(202)
    expect(await res.json()).toMatchObject({ id: expect.stringMatching(/^\d+$/) })
    expect(await env.sql('SELECT name, queue FROM $schema.jobs')).toEqual([
      { name: 'welcome-email', queue: 'emails' },
    ])
    await vi.waitFor(() => expect(wakes).toHaveLength(1), { timeout: 10_000, interval: 20 })
    expect(JSON.parse(wakes[0]!).queues).toEqual(['emails'])
  })

  test('refuses a request without credentials and answers unknown paths with JSON 404', async () => {
    const res = await mf.dispatchFetch('https://sluice-enqueue.example.workers.dev/jobs/welcome-email', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    expect(res.status).toBe(401)
    await res.arrayBuffer()
    const missing = await mf.dispatchFetch('https://sluice-enqueue.example.workers.dev/nope')
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: { code: expect.any(String) } })
  })
})
