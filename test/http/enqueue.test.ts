import { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer, countJobs, errorOf, postJson } from '../helpers/http.js'

const greet = defineJob({
  name: 'greet',
  input: z.object({ who: z.string().min(1) }),
  run: () => {},
})

describe('POST /jobs/:name', () => {
  let t: TestSluice
  let app: Hono

  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet], maxPayloadBytes: 1024 })
    app = appFor(t)
  })
  afterAll(() => t.cleanup())
  beforeEach(async () => {
    await t.sql('DELETE FROM $schema.jobs')
    t.statements.reset()
  })

  test('202 with the id; the row holds input, priority and run time', async () => {
    const runAt = '2030-01-02T03:04:05.000Z'
    const res = await postJson(app, '/jobs/greet', { input: { who: 'ada' }, priority: 7, runAt })
    expect(res.status).toBe(202)
    const { id } = (await res.json()) as { id: string }
    expect(id).toMatch(/^\d+$/)
    expect(t.statements.count).toBe(1)
    const [row] = await t.sql<{ payload: unknown; priority: number; run_at: Date }>(
      'SELECT payload, priority, run_at FROM $schema.jobs WHERE id = $1',
      [id],
    )
    expect(row).toEqual({ payload: { who: 'ada' }, priority: 7, run_at: new Date(runAt) })
  })

  test('delay is applied by the database clock', async () => {
    const res = await postJson(app, '/jobs/greet', { input: { who: 'bo' }, delay: 3_600_000 })
    expect(res.status).toBe(202)
    const [row] = await t.sql<{ ahead: number }>(
      'SELECT extract(epoch FROM run_at - now())::float8 AS ahead FROM $schema.jobs',
    )
    expect(row!.ahead).toBeGreaterThan(3500)
  })

  test('400 with issues pointing into the body for bad input; nothing written', async () => {
    const res = await postJson(app, '/jobs/greet', { input: { who: '' } })
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.issues?.[0]?.path).toEqual(['input', 'who'])
    expect(await countJobs(t)).toBe(0)
    expect(t.statements.count).toBe(0)
  })

  test.each([
    ['unknown key', { input: { who: 'x' }, extra: 1 }, []],
    ['missing input', { priority: 1 }, ['input']],
    ['bad priority', { input: { who: 'x' }, priority: -1 }, ['priority']],
    ['bad delay', { input: { who: 'x' }, delay: 1.5 }, ['delay']],
    ['bad runAt', { input: { who: 'x' }, runAt: 'tomorrow' }, ['runAt']],
    ['not an object', [1, 2], []],
  ])('400 for a bad body (%s); nothing written', async (_, body, path) => {
    const res = await postJson(app, '/jobs/greet', body)
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.issues?.length).toBeGreaterThan(0)
    expect(error.issues?.[0]?.path).toEqual(path)
    expect(await countJobs(t)).toBe(0)
  })

  test('invalid JSON is a 400 that says so', async () => {
    const res = await postJson(app, '/jobs/greet', '{"input": {"who": "ada"')
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toMatch(/not valid JSON/)
    expect(await countJobs(t)).toBe(0)
  })

  test('a body without input is a 400 that says input is required', async () => {
    const res = await postJson(app, '/jobs/greet', {})
    expect(res.status).toBe(400)
    expect(await errorOf(res)).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'Invalid request body at input: is required',
      issues: [{ path: ['input'], message: 'is required' }],
    })
  })

  test('an empty body is a 400', async () => {
    const res = await postJson(app, '/jobs/greet', '')
    expect(res.status).toBe(400)
    expect((await errorOf(res)).message).toMatch(/empty/)
  })

  test('400 INVALID_NAME for a name no job can have, before anything else', async () => {
    for (const name of ['-bad-name', 'a%20b', 'a'.repeat(129), 'x%00y']) {
      const res = await postJson(app, `/jobs/${name}`, { input: {} })
      expect(res.status, name).toBe(400)
      expect((await errorOf(res)).code, name).toBe('INVALID_NAME')
    }
    expect(t.statements.count).toBe(0)
  })

  test('404 UNKNOWN_JOB for a job that is not defined', async () => {
    const res = await postJson(app, '/jobs/nope', { input: {} })
    expect(res.status).toBe(404)
    expect((await errorOf(res)).code).toBe('UNKNOWN_JOB')
    expect(t.statements.count).toBe(0)
  })

  describe('413 before parsing, nothing written', () => {
    const big = JSON.stringify({ input: { who: 'x'.repeat(20_000) } })

    test('from the Content-Length header', async () => {
      const res = await postJson(app, '/jobs/greet', big)
      expect(res.status).toBe(413)
      expect((await errorOf(res)).code).toBe('PAYLOAD_TOO_LARGE')
      expect(await countJobs(t)).toBe(0)
      expect(t.statements.count).toBe(0)
    })

    test('from the bytes, when Content-Length lies', async () => {
      const req = new Request('http://localhost/jobs/greet', {
        method: 'POST',
        headers: { ...bearer(), 'Content-Type': 'application/json', 'Content-Length': '20' },
        body: big,
      })
      expect(req.headers.get('content-length')).toBe('20')
      const res = await app.request(req)
      expect(res.status).toBe(413)
      expect(await countJobs(t)).toBe(0)
    })

    test('from the bytes, when the body is streamed without a length: reading stops at the limit', async () => {
      let pulled = 0
      const chunk = new Uint8Array(1000).fill(0x20)
      const endless = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled += chunk.length
          controller.enqueue(chunk.slice())
        },
      })
      const init = { method: 'POST', headers: bearer(), body: endless, duplex: 'half' }
      const req = new Request('http://localhost/jobs/greet', init as RequestInit)
      expect(req.headers.has('content-length')).toBe(false)
      const res = await app.request(req)
      expect(res.status).toBe(413)
      // The limit is 1024 + 4096 bytes: the reader gave up a few chunks past it.
      expect(pulled).toBeLessThan(20_000)
      expect(await countJobs(t)).toBe(0)
    })

    test('an input over maxPayloadBytes inside a body under the HTTP limit', async () => {
      const res = await postJson(app, '/jobs/greet', { input: { who: 'x'.repeat(1500) } })
      expect(res.status).toBe(413)
      expect(await countJobs(t)).toBe(0)
    })
  })

  test('unknown routes and methods are JSON 404s', async () => {
    const res = await app.request('/nowhere', { headers: bearer() })
    expect(res.status).toBe(404)
    expect(await errorOf(res)).toEqual({ code: 'NOT_FOUND', message: 'No route for GET /nowhere.' })
    const wrongMethod = await app.request('/jobs/greet', { headers: bearer() })
    expect(wrongMethod.status).toBe(404)
  })

  test('mounted under a base path', async () => {
    const parent = new Hono()
    parent.get('/', (c) => c.text('home'))
    parent.route('/sluice', app)
    const res = await postJson(parent, '/sluice/jobs/greet', { input: { who: 'mounted' } })
    expect(res.status).toBe(202)
    expect(await countJobs(t)).toBe(1)
    const unknown = await postJson(parent, '/sluice/jobs/nope', { input: {} })
    expect(unknown.status).toBe(404)
    expect((await errorOf(unknown)).code).toBe('UNKNOWN_JOB')
    const denied = await postJson(parent, '/sluice/jobs/greet', { input: { who: 'x' } }, {})
    expect(denied.status).toBe(401)
    expect((await parent.request('/sluice/health')).status).toBe(200)
    expect(await (await parent.request('/')).text()).toBe('home')
  })
})

describe('errors from the server side carry no internals', () => {
  test('a plain Error from a hook is a 500 INTERNAL, reported but not shown', async () => {
    const reported: unknown[] = []
    const t = await makeSluice({
      jobs: [greet],
      hooks: {
        beforeEnqueue() {
          throw new Error('secret internal detail')
        },
      },
    })
    try {
      const app = appFor(t, { onError: (error) => reported.push(error) })
      const res = await postJson(app, '/jobs/greet', { input: { who: 'x' } })
      expect(res.status).toBe(500)
      const text = await res.text()
      expect(JSON.parse(text)).toEqual({ error: { code: 'INTERNAL', message: 'Internal error.' } })
      expect(text).not.toContain('secret')
      expect(reported).toHaveLength(1)
    } finally {
      await t.cleanup()
    }
  })
})
