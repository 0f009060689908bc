import type { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { type DrainSummary, defineJob, defineSubscriber, PermanentJobError } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer, errorOf, postJson } from '../helpers/http.js'

// Requests a hostile caller sent: each one was answered wrongly (accepted with data dropped,
// or refused with a misleading message). A 4xx names the field and writes nothing.

const anything = defineJob({ name: 'anything', input: z.unknown(), run: () => {} })
const doomed = defineJob({
  name: 'doomed',
  queue: 'doomed',
  input: z.object({ n: z.number() }),
  run: () => {
    throw new PermanentJobError('never')
  },
})
const audit = defineSubscriber({ name: 'audit', topic: 'orders.#', queue: 'audits', run: () => {} })

let t: TestSluice
let app: Hono
beforeAll(async () => {
  t = await makeSluice({ jobs: [anything, doomed], subscribers: [audit] })
  app = appFor(t)
})
afterAll(() => t.cleanup())
beforeEach(async () => {
  await t.sql('TRUNCATE $schema.jobs, $schema.event_deliveries, $schema.dead_letters')
})

async function written(): Promise<number> {
  const [row] = await t.sql<{ n: string }>(
    'SELECT (SELECT count(*) FROM $schema.jobs) + (SELECT count(*) FROM $schema.event_deliveries) AS n',
  )
  return Number(row!.n)
}

const get = (path: string): Promise<Response> => Promise.resolve(app.request(path, { headers: bearer() }))

describe('delay and runAt together are refused, not one of them dropped', () => {
  test('POST /jobs/:name with both: 400 naming both, nothing written', async () => {
    const res = await postJson(app, '/jobs/anything', { input: 1, runAt: '2027-01-01T00:00:00Z', delay: 5 })
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toContain('delay')
    expect(error.message).toContain('runAt')
    expect(await written()).toBe(0)
  })

  test('either alone is still accepted', async () => {
    expect((await postJson(app, '/jobs/anything', { input: 1, delay: 5 })).status).toBe(202)
    expect((await postJson(app, '/jobs/anything', { input: 1, runAt: '2027-01-01T00:00:00Z' })).status).toBe(
      202,
    )
  })
})

describe('a header named __proto__ is refused, not dropped', () => {
  test.each([
    ['__proto__', '{"payload": 1, "headers": {"__proto__": "x"}}'],
    ['__proto__, escaped', '{"payload": 1, "headers": {"a": "b", "\\u005f_proto__": "x"}}'],
  ])('POST /events/:topic with %s: 400 naming the header, nothing written', async (_, body) => {
    const res = await postJson(app, '/events/orders.created', body)
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toContain('headers.__proto__')
    expect(error.issues?.[0]?.path).toEqual(['headers', '__proto__'])
    expect(await written()).toBe(0)
  })

  test('headers named constructor and prototype are stored as sent', async () => {
    const headers = { constructor: 'c', prototype: 'p', tenant: 't' }
    const res = await postJson(app, '/events/orders.created', { payload: 1, headers })
    expect(res.status).toBe(202)
    const rows = await t.sql<{ headers: unknown }>("SELECT payload->'headers' AS headers FROM $schema.jobs")
    expect(rows.map((r) => r.headers)).toEqual([headers])
  })

  test('a job input with a __proto__ key is stored as sent by a schema that takes it as it is', async () => {
    const res = await postJson(app, '/jobs/anything', '{"input": {"__proto__": {"x": 1}, "y": 2}}')
    expect(res.status).toBe(202)
    const [row] = await t.sql<{ payload: string }>('SELECT payload::text AS payload FROM $schema.jobs')
    expect(JSON.parse(row!.payload)).toEqual(JSON.parse('{"__proto__": {"x": 1}, "y": 2}'))
    expect(Object.hasOwn(JSON.parse(row!.payload), '__proto__')).toBe(true)
  })
})

describe('dead-letter ids may be numbers', () => {
  const deadIds = async (): Promise<string[]> =>
    (await t.sql<{ id: string }>('SELECT id::text AS id FROM $schema.dead_letters ORDER BY id')).map(
      (r) => r.id,
    )

  test.each(['retry', 'discard'])(
    'POST /dead-letters/%s takes {"ids": [95]} as {"ids": ["95"]}',
    async (verb) => {
      await t.sluice.enqueue(doomed, { n: 1 })
      await t.sluice.drain({ queues: ['doomed'] })
      const [id] = await deadIds()
      const res = await postJson(app, `/api/v1/dead-letters/${verb}`, { ids: [Number(id)] })
      expect(res.status).toBe(200)
      expect(((await res.json()) as { ids: string[] }).ids).toEqual([id])
      expect(await deadIds()).toEqual([])
    },
  )

  test.each([
    [0, 'must be a positive integer'],
    [-3, 'must be a positive integer'],
    [1.5, 'a positive integer'],
    [2 ** 60, 'as a string of digits'],
    [true, 'a job id'],
    [null, 'a job id'],
    ['x', 'must be a positive integer'],
  ])('POST /dead-letters/retry with {"ids": [%j]}: 400 "%s"', async (value, message) => {
    await t.sluice.enqueue(doomed, { n: 1 })
    await t.sluice.drain({ queues: ['doomed'] })
    const before = await deadIds()
    const res = await postJson(app, '/api/v1/dead-letters/retry', { ids: [value] })
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.message).toContain(message)
    expect(error.issues?.[0]?.path).toEqual(['ids', 0])
    expect(await deadIds()).toEqual(before)
  })
})

describe('a too large whole number gets the "at most" message alone', () => {
  test.each([
    ['/api/v1/jobs/99999999999999999999999', 'must be at most 9223372036854775807'],
    ['/api/v1/jobs/9223372036854775808', 'must be at most 9223372036854775807'],
    ['/api/v1/jobs?cursor=99999999999999999999999', 'must be at most 9223372036854775807'],
    ['/api/v1/dead-letters?cursor=99999999999999999999999', 'must be at most 9223372036854775807'],
    ['/api/v1/stats?sinceMs=99999999999999999999', 'must be at most 2592000000'],
    ['/api/v1/stats?sinceMs=2592000001', 'must be at most 2592000000'],
    ['/api/v1/jobs?limit=99999999999', 'must be at most 1000'],
  ])('GET %s: 400 "%s"', async (path, message) => {
    const res = await get(path)
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.issues?.map((i) => i.message)).toEqual([message])
    expect(error.message).toContain(message)
  })

  test.each([
    ['/api/v1/jobs/abc', 'must be a positive integer'],
    ['/api/v1/jobs/0', 'must be a positive integer'],
    ['/api/v1/stats?sinceMs=1e3', 'must be a whole number of ms'],
    ['/api/v1/stats?sinceMs=0', 'must be at least 1'],
  ])('GET %s: 400 "%s"', async (path, message) => {
    const res = await get(path)
    expect(res.status).toBe(400)
    expect((await errorOf(res)).issues?.map((i) => i.message)).toEqual([message])
  })

  test('the largest id and window are accepted', async () => {
    expect((await get('/api/v1/jobs/9223372036854775807')).status).toBe(404)
    expect((await get('/api/v1/stats?sinceMs=2592000000')).status).toBe(200)
  })
})

describe('a compressed body is 415, not "not valid UTF-8"', () => {
  test.each(['gzip', 'br', 'deflate, gzip'])('Content-Encoding: %s', async (encoding) => {
    for (const path of ['/jobs/anything', '/events/orders.created', '/drain', '/api/v1/dead-letters/retry']) {
      const res = await postJson(app, path, new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 0xff]) as never, {
        ...bearer(),
        'Content-Encoding': encoding,
      })
      expect(res.status, path).toBe(415)
      const error = await errorOf(res)
      expect(error.code).toBe('UNSUPPORTED_MEDIA_TYPE')
      expect(error.message).toContain('must not be compressed')
      expect(error.message).toContain(`Content-Encoding ${encoding}`)
    }
    expect(await written()).toBe(0)
  })

  test('Content-Encoding: identity is a plain body', async () => {
    const res = await postJson(
      app,
      '/jobs/anything',
      { input: 1 },
      { ...bearer(), 'Content-Encoding': 'identity' },
    )
    expect(res.status).toBe(202)
  })
})

describe('POST /drain refuses queues no job or subscriber uses', () => {
  test('{"queues": ["nope"]}: 400 naming the queue, no drain invocation', async () => {
    const before = await t.sql('SELECT 1 FROM $schema.invocations')
    const res = await postJson(app, '/drain', { queues: ['default', 'doomd'] })
    expect(res.status).toBe(400)
    const error = await errorOf(res)
    expect(error.code).toBe('INVALID_INPUT')
    expect(error.message).toContain('"doomd"')
    expect(error.message).toContain('Did you mean "doomed"?')
    expect(error.issues?.[0]?.path).toEqual(['queues', 1])
    expect(await t.sql('SELECT 1 FROM $schema.invocations')).toHaveLength(before.length)
  })

  test("the jobs' and the subscribers' queues are drained", async () => {
    const res = await postJson(app, '/drain', { queues: ['default', 'doomed', 'audits'] })
    expect(res.status).toBe(200)
    expect(((await res.json()) as DrainSummary).queues).toEqual(['default', 'doomed', 'audits'])
  })
})

describe('an unknown name is quoted, not echoed whole', () => {
  const long = 'a'.repeat(100_000)
  test('POST /jobs/<100,000 characters>: 400 INVALID_NAME with at most 80 of them', async () => {
    const res = await postJson(app, `/jobs/${long}`, { input: 1 })
    expect(res.status).toBe(400)
    const text = await res.text()
    expect(text.length).toBeLessThan(400)
    expect(JSON.parse(text)).toMatchObject({
      error: { code: 'INVALID_NAME', message: expect.stringContaining(`"${'a'.repeat(80)}"`) },
    })
  })

  test('POST /api/v1/queues/<100,000 characters>/pause: a 4xx that quotes at most 80 of them', async () => {
    const res = await app.request(`/api/v1/queues/${long}/pause`, { method: 'POST', headers: bearer() })
    expect([400, 404]).toContain(res.status)
    expect((await res.text()).length).toBeLessThan(600)
  })

  test('sluice.enqueue of a name no job can have says at most 80 characters of it', async () => {
    await expect(t.sluice.enqueue(long, {} as never)).rejects.toThrow(/^Invalid job name "a{80}": /)
    // A name a job could have, but none has: the same bound.
    await expect(t.sluice.enqueue(`a${'-'.repeat(126)}b`, {} as never)).rejects.toThrow(
      /^No job named "a-{79}…" is defined\.$/,
    )
  })
})

describe('a body without a Content-Type is refused even when no header announces it', () => {
  test('a streamed body with no Content-Length, Transfer-Encoding or Content-Type: 415, nothing written', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"input":1}'))
        controller.close()
      },
    })
    const request = new Request('http://localhost/jobs/anything', {
      method: 'POST',
      headers: bearer(),
      body,
      duplex: 'half',
    } as RequestInit)
    expect(request.headers.get('content-length')).toBeNull()
    const res = await app.request(request)
    expect(res.status).toBe(415)
    expect(await errorOf(res)).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' })
    expect(await written()).toBe(0)
  })

  test('a POST with neither body nor Content-Type still passes (curl -X POST /drain)', async () => {
    const res = await app.request('/drain', { method: 'POST', headers: bearer() })
    expect(res.status).toBe(200)
  })
})
