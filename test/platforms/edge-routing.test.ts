import { Hono } from 'hono'
import { HonoBase } from 'hono/hono-base'
import { expect, test } from 'vitest'
import * as z from 'zod'
import { createEnqueueApp, defineContract, type EdgeClient } from '../../src/edge.js'
import { StrictPatternRouter } from '../../src/http/router.js'
import { bearer, errorOf, postJson, testEnv } from '../helpers/http.js'

/** Routes of the shapes apps register (statics, parameters, regexp parameters, optional ones, wildcards). */
const ROUTES = [
  ['ALL', '*'],
  ['POST', '/jobs/:name'],
  ['POST', '/events/:topic'],
  ['POST', '/api/enqueue/:name'],
  ['POST', '/api/enqueue/events/:topic'],
  ['GET', '/'],
  ['GET', '/health'],
  ['GET', '/dir/'],
  ['GET', '/files/*'],
  ['GET', '/v:version/items/:id'],
  ['GET', '/posts/:id{[0-9]+}'],
  ['GET', '/opt/:a?'],
  ['ALL', '/any/:x/more'],
] as const

const PATHS = [
  '/',
  '//',
  '/jobs/a',
  '/jobs/a/',
  '/jobs/',
  '/jobs',
  '/jobs//a',
  '/jobs/a/b',
  '/jobs/a%2Fb',
  '/jobs/a%20b',
  '/jobs/%E2%82%AC',
  '/jobs/a.b:c-d_e',
  '/JOBS/a',
  '/events/orders.created',
  '/events/orders.created/',
  '/events/',
  '/api/enqueue/welcome-email',
  '/api/enqueue/welcome-email/',
  '/api/enqueue/events',
  '/api/enqueue/events/',
  '/api/enqueue/events/t',
  '/api/enqueue/events/t/',
  '/api/enqueue/events/t/u',
  '/health',
  '/health/',
  '/dir/',
  '/dir',
  '/files',
  '/files/',
  '/files/a/b',
  '/v1/items/7',
  '/v1/items/7/',
  '/posts/12',
  '/posts/x',
  '/posts/12/',
  '/opt',
  '/opt/',
  '/opt/b',
  '/opt/b/',
  '/any/1/more',
  '/any/1/more/',
  '/nowhere',
]

type Seen = { Variables: { seen: string[] } }

/** Which routes answer each method and path, in order, with their parameters. */
async function routing(app: Hono<Seen>): Promise<string[]> {
  for (const [method, path] of ROUTES) {
    const label = `${method} ${path}`
    app.on(method === 'ALL' ? ['GET', 'POST', 'PUT'] : [method], path, async (c, next) => {
      c.set('seen', [...(c.get('seen') ?? []), `${label} ${JSON.stringify(c.req.param())}`])
      await next()
    })
  }
  // Every handler calls next(): the not-found handler ends each chain and reports it.
  app.notFound((c) => c.json(c.get('seen') ?? [], 404))
  const seen: string[] = []
  for (const method of ['GET', 'POST', 'PUT']) {
    for (const path of PATHS) {
      const res = await app.request(path, { method })
      seen.push(`${method} ${path} → ${res.status} ${await res.text()}`)
    }
  }
  return seen
}

test("the edge app's router matches as the default Hono preset does, trailing slashes included", async () => {
  const strict = await routing(new HonoBase<Seen>({ router: new StrictPatternRouter() }))
  const preset = await routing(new Hono<Seen>())
  expect(strict).toEqual(preset)
})

test('createEnqueueApp answers a path with a trailing slash with the JSON 404, as createApp does', async () => {
  const contract = defineContract({ name: 'welcome-email', input: z.object({ to: z.string() }) })
  const enqueued: unknown[] = []
  const client = {
    schema: 'sluice',
    jobs: new Map([[contract.name, contract]]),
    enqueue: async (_job: unknown, input: unknown) => {
      enqueued.push(input)
      return { id: '1', status: 'enqueued' }
    },
    enqueueMany: async () => [],
    publish: async () => ({ eventId: 'e', jobs: 1 }),
  } as unknown as EdgeClient
  const app = createEnqueueApp(client, { env: testEnv, onError: () => {} })
  expect((await postJson(app, '/jobs/welcome-email', { input: { to: 'a' } })).status).toBe(202)
  expect((await postJson(app, '/events/orders.created', { payload: {} })).status).toBe(202)
  for (const path of ['/jobs/welcome-email/', '/events/orders.created/', '/events/', '/jobs/']) {
    const res = await postJson(app, path, { input: { to: 'a' }, payload: {} }, bearer())
    expect(res.status, path).toBe(404)
    expect(await errorOf(res), path).toMatchObject({ code: 'NOT_FOUND' })
  }
  expect(enqueued).toEqual([{ to: 'a' }])
})
