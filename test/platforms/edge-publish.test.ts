import { neon, neonConfig } from '@neondatabase/serverless'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createEdgeClient, createEnqueueApp, type EdgeClient } from '../../src/edge.js'
import { defineSubscriber, fromNeonHttp, instrument } from '../../src/index.js'
import { databaseUrl, makeSluice, StatementCounter, type TestSluice } from '../helpers/db.js'
import { bearer, errorOf, postJson, testEnv } from '../helpers/http.js'
import {
  configureNeonHttpForLocal,
  type NeonHttpServer,
  startNeonHttpServer,
} from '../support/neon-http-server.js'

const NEON_URL = 'postgres://sluice:sluice@localhost:5432/sluice'
let handled: unknown[] = []
const audit = defineSubscriber({
  name: 'audit',
  topic: 'orders.#',
  run: (payload) => {
    handled.push(payload)
  },
})

let env: TestSluice
let server: NeonHttpServer
let edge: EdgeClient
const statements = new StatementCounter()

beforeAll(async () => {
  env = await makeSluice({ subscribers: [audit] })
  server = await startNeonHttpServer({ connectionString: databaseUrl })
  configureNeonHttpForLocal(neonConfig, server.port)
  edge = createEdgeClient({
    database: instrument(fromNeonHttp(neon(NEON_URL)), statements.hook),
    jobs: [],
    schema: env.schema,
    maxPayloadBytes: 512,
  })
})
afterAll(async () => {
  await server.close()
  await env.cleanup()
})

test('the edge client publishes in one statement, and the drains run the subscriber', async () => {
  handled = []
  statements.reset()
  expect(
    await edge.publish('orders.created', { id: 'e1' }, { eventId: 'e1', headers: { via: 'edge' } }),
  ).toEqual({
    eventId: 'e1',
    jobs: 1,
  })
  expect(statements.count).toBe(1)
  expect(await edge.publish('orders.created', { id: 'e1' }, { eventId: 'e1' })).toEqual({
    eventId: 'e1',
    jobs: 0,
  })
  await expect(edge.publish('orders.#', {})).rejects.toMatchObject({ code: 'INVALID_NAME' })
  await expect(edge.publish('orders.x', 'x'.repeat(600))).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' })
  await expect(edge.publish('orders.x', {}, { tx: {} } as never)).rejects.toMatchObject({
    code: 'INVALID_INPUT',
  })
  expect(statements.count).toBe(2)
  expect(await env.sluice.drain()).toMatchObject({ completed: 1 })
  expect(handled).toEqual([{ id: 'e1' }])
})

test('createEnqueueApp serves POST /events/:topic over the edge client', async () => {
  const app = createEnqueueApp(edge, { env: testEnv, onError: () => {} })
  const res = await postJson(app, '/events/orders.paid', { payload: { id: 'e2' }, eventId: 'e2' })
  expect(res.status).toBe(202)
  expect(await res.json()).toEqual({ eventId: 'e2', jobs: 1 })
  const bad = await postJson(app, '/events/orders.paid', { payload: 1, eventId: 'no spaces allowed' })
  expect(bad.status).toBe(400)
  expect((await errorOf(bad)).issues?.[0]?.path).toEqual(['eventId'])
  expect((await postJson(app, '/events/orders.paid', { payload: 1 }, {})).status).toBe(401)

  const moved = createEnqueueApp(edge, { env: testEnv, onError: () => {}, eventsPath: '/api/events' })
  expect((await postJson(moved, '/api/events/orders.paid', { payload: 1 }, bearer())).status).toBe(202)
  const off = createEnqueueApp(edge, { env: testEnv, onError: () => {}, eventsPath: false })
  expect((await postJson(off, '/events/orders.paid', { payload: 1 })).status).toBe(404)
})
