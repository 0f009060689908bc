import type { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineSubscriber } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, countJobs, errorOf, postJson } from '../helpers/http.js'

const created = defineSubscriber({
  name: 'order-created',
  topic: 'orders.created',
  input: z.object({ id: z.string().min(1) }),
  run: () => {},
})
const everything = defineSubscriber({ name: 'firehose', topic: '#', run: () => {} })

describe('POST /events/:topic', () => {
  let t: TestSluice
  let app: Hono

  beforeAll(async () => {
    t = await makeSluice({ subscribers: [created, everything], maxPayloadBytes: 1024 })
    app = appFor(t)
  })
  afterAll(() => t.cleanup())
  beforeEach(async () => {
    await t.sql('DELETE FROM $schema.jobs')
    t.statements.reset()
  })

  test('POST /jobs/<subscriber> is a 404 that points to /events, whatever the body; nothing written', async () => {
    for (const body of [{ input: { id: 'o1' } }, { input: { topic: 'orders.created', payload: {} } }]) {
      const res = await postJson(app, '/jobs/order-created', body)
      expect(res.status).toBe(404)
      const error = await errorOf(res)
      expect(error.code).toBe('UNKNOWN_JOB')
      expect(error.message).toMatch(
        /"order-created" is a subscriber.*POST \/events\/<topic>.*"orders\.created"/,
      )
      expect(error.issues).toBeUndefined()
    }
    expect(t.statements.count).toBe(0)
    expect(await countJobs(t)).toBe(0)
  })

  test('202 with the event id and the jobs written, in one statement', async () => {
    const res = await postJson(app, '/events/orders.created', {
      payload: { id: 'o1' },
      eventId: 'o1-created',
      headers: { tenant: 'acme' },
    })
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ eventId: 'o1-created', jobs: 2 })
    expect(t.statements.count).toBe(1)
    const rows = await t.sql<{ name: string; payload: unknown }>(
      'SELECT name, payload FROM $schema.jobs ORDER BY name',
    )
    expect(rows.map((r) => r.name)).toEqual(['firehose', 'order-created'])
    expect(rows[0]!.payload).toMatchObject({
      topic: 'orders.created',
      eventId: 'o1-created',
      headers: { tenant: 'acme' },
    })

    // The same event id again: accepted, nothing written.
    const again = await postJson(app, '/events/orders.created', {
      payload: { id: 'o1' },
      eventId: 'o1-created',
    })
    expect(again.status).toBe(202)
    expect(await again.json()).toEqual({ eventId: 'o1-created', jobs: 0 })
  })

  test('a generated event id, a delay by the database clock, null payloads', async () => {
    const res = await postJson(app, '/events/users.deleted', { payload: null, delay: 3_600_000 })
    expect(res.status).toBe(202)
    const body = (await res.json()) as { eventId: string; jobs: number }
    expect(body).toEqual({ eventId: expect.stringMatching(/^[0-9a-f-]{36}$/), jobs: 1 })
    const [row] = await t.sql<{ ahead: number }>(
      'SELECT extract(epoch FROM run_at - now())::float8 AS ahead FROM $schema.jobs',
    )
    expect(row!.ahead).toBeGreaterThan(3500)
  })

  test('401 without credentials; nothing written', async () => {
    const res = await postJson(app, '/events/orders.created', { payload: { id: 'x' } }, {})
    expect(res.status).toBe(401)
    expect(await countJobs(t)).toBe(0)
  })

  test.each([
    ['a wildcard', 'orders.*'],
    ['an empty word', 'orders..created'],
    ['a trailing dot', 'orders.'],
    ['a bad character', 'orders.cr%C3%A9ated'],
  ])('400 INVALID_NAME for a topic with %s', async (_, topic) => {
    const res = await postJson(app, `/events/${topic}`, { payload: {} })
    expect(res.status).toBe(400)
    expect((await errorOf(res)).code).toBe('INVALID_NAME')
    expect(await countJobs(t)).toBe(0)
  })

  test.each([
    ['missing payload', {}, ['payload']],
    ['unknown key', { payload: 1, priority: 3 }, []],
    ['bad event id', { payload: 1, eventId: 'has space' }, ['eventId']],
    ['bad delay', { payload: 1, delay: -5 }, ['delay']],
    ['bad headers', { payload: 1, headers: { 'bad key': 'x' } }, ['headers', 'bad key']],
    ['payload a subscriber rejects', { payload: { id: '' } }, ['payload', 'id']],
  ])('400 for a bad body (%s); nothing written', async (_, body, path) => {
    const res = await postJson(app, '/events/orders.created', body)
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.issues?.[0]?.path).toEqual(path)
    expect(await countJobs(t)).toBe(0)
  })

  test('413 for a payload over the limit', async () => {
    const res = await postJson(app, '/events/orders.created', { payload: { id: 'x'.repeat(2000) } })
    expect(res.status).toBe(413)
    expect((await errorOf(res)).code).toBe('PAYLOAD_TOO_LARGE')
    expect(await countJobs(t)).toBe(0)
  })
})
