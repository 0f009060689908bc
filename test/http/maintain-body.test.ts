/**
 * The body of `/maintain`, wherever it is served (createApp, maintainApp, vercelHandlers,
 * vercelMaintain, apiHandler and maintainHandler over HTTP), is read as the drain reads its own:
 * up to maxBodyBytes, empty or a JSON object of the route's options (maintenance takes none).
 * A larger body is 413 PAYLOAD_TOO_LARGE and anything else a 400, and maintenance does not run.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { maintainApp } from '../../src/index.js'
import { apiHandler, maintainHandler } from '../../src/platforms/aws-lambda.js'
import { vercelHandlers, vercelMaintain } from '../../src/platforms/vercel.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, bearer, CRON_SECRET, errorOf, testEnv } from '../helpers/http.js'
import { httpEventV2, type LambdaHttpResult, lambdaContext } from '../helpers/lambda.js'

type Fetch = (request: Request) => Promise<Response>
type LambdaHttp = (event: unknown, context: unknown) => Promise<LambdaHttpResult>

const FIVE_MB = 5 * 1024 * 1024
const big = JSON.stringify({ pad: 'x'.repeat(FIVE_MB) })

let t: TestSluice
/** Every place `/maintain` is served, as a fetch from a path-relative request. */
let servers: [string, Fetch][]
let limit: number

beforeAll(async () => {
  t = await makeSluice({ jobs: [] })
  limit = t.sluice.config.maxPayloadBytes + 4096
  const options = { env: testEnv, onError: () => {} }
  const full = appFor(t)
  const lean = maintainApp(t.sluice, options)
  const vercel = vercelHandlers(t.sluice, { ...options, wakeWaitMs: 0 })
  const vercelLean = vercelMaintain(t.sluice, { ...options, wakeWaitMs: 0 })
  const api = apiHandler(t.sluice, { ...options, wakeWaitMs: 0 }) as unknown as LambdaHttp
  const overLambda =
    (handler: LambdaHttp): Fetch =>
    async (request) => {
      const url = new URL(request.url)
      const body = request.method === 'GET' ? undefined : await request.text()
      const headers: Record<string, string> = {}
      request.headers.forEach((value, name) => {
        headers[name] = value
      })
      const event = httpEventV2(request.method, url.pathname, {
        headers,
        ...(body ? { body } : {}),
      })
      const result = await handler(event, lambdaContext(29_000, 'sluice-dev-api'))
      return new Response(result.body, { status: result.statusCode, headers: result.headers })
    }
  const at = (fetch: (request: Request) => Response | Promise<Response>, prefix: string): Fetch => {
    return async (request) => {
      const url = new URL(request.url)
      return fetch(new Request(new URL(`${prefix}${url.pathname}`, url), request))
    }
  }
  servers = [
    ['createApp', at((r) => full.fetch(r), '')],
    ['maintainApp', at((r) => lean.fetch(r), '')],
    ['vercelHandlers', at(vercel.POST, '/api')],
    ['vercelMaintain', at(vercelLean.POST, '/api')],
    ['apiHandler', overLambda(api)],
  ]
})
afterAll(() => t?.cleanup())
beforeEach(async () => {
  // Every task due: a maintenance run writes a row per task.
  await t.sql('DELETE FROM $schema.maintenance')
})

const ran = async (): Promise<number> =>
  Number((await t.sql('SELECT count(*) AS n FROM $schema.maintenance'))[0]!.n)

function maintainRequest(body: BodyInit | undefined, headers: Record<string, string> = {}): Request {
  return new Request('http://localhost/maintain', {
    method: 'POST',
    headers: { ...bearer(), 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body }),
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit)
}

/** A body sent in chunks, with no Content-Length: its size is only known by reading it. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let offset = 0
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(offset, offset + 64 * 1024))
      offset += 64 * 1024
    },
  })
}

describe('/maintain reads its body as /drain does', () => {
  test('a 5 MB body is 413 PAYLOAD_TOO_LARGE, as at /drain, and maintenance does not run', async () => {
    const drain = await appFor(t).request('/drain', {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: big,
    })
    expect(drain.status).toBe(413)
    const drainError = await errorOf(drain)
    expect(drainError.code).toBe('PAYLOAD_TOO_LARGE')
    for (const [name, serve] of servers) {
      const res = await serve(maintainRequest(big))
      expect(res.status, name).toBe(413)
      const error = await errorOf(res)
      expect(Object.keys(error), name).toEqual(Object.keys(drainError))
      expect(error.code, name).toBe(drainError.code)
      expect(error.message, name).toContain(String(limit))
      expect(await ran(), name).toBe(0)
    }
  })

  test('a body over the limit without a Content-Length is cut off at the limit: 413, nothing runs', async () => {
    // hono/aws-lambda always sets the length from the event's body: the fetch servers only.
    for (const [name, serve] of servers.filter(([name]) => name !== 'apiHandler')) {
      const res = await serve(maintainRequest(chunked(big)))
      expect(res.status, name).toBe(413)
      expect((await errorOf(res)).code, name).toBe('PAYLOAD_TOO_LARGE')
      expect(await ran(), name).toBe(0)
    }
  })

  test('a body just over the limit is refused; one at the limit is read', async () => {
    const [, serve] = servers[0]!
    const over = `{"pad":"${'x'.repeat(limit - 9)}"}`
    expect(new TextEncoder().encode(over).length).toBe(limit + 1)
    expect((await serve(maintainRequest(over))).status).toBe(413)
    expect(await ran()).toBe(0)
    // At the limit the body is read, and refused for what it says (maintenance takes no `pad`).
    const atLimit = over.slice(0, 8) + over.slice(9)
    const res = await serve(maintainRequest(atLimit))
    expect(res.status).toBe(400)
    expect(await ran()).toBe(0)
  })

  test.each([
    ['{"foo":1}', 'INVALID_INPUT'],
    ['[]', 'INVALID_INPUT'],
    ['"run"', 'INVALID_INPUT'],
    ['null', 'INVALID_INPUT'],
    ['{"tasks":', 'INVALID_INPUT'],
  ])(
    'a body that is not an options object (%s) is a 400, and maintenance does not run',
    async (body, code) => {
      for (const [name, serve] of servers) {
        const res = await serve(maintainRequest(body))
        expect(res.status, name).toBe(400)
        expect((await errorOf(res)).code, name).toBe(code)
        expect(await ran(), name).toBe(0)
      }
    },
  )

  test('an empty body, `{}` and a GET (Vercel cron) still run maintenance', async () => {
    for (const [name, serve] of servers) {
      for (const request of [
        maintainRequest(undefined, { 'content-type': '' }),
        maintainRequest('{}'),
        new Request('http://localhost/maintain', { headers: bearer(CRON_SECRET) }),
      ]) {
        await t.sql('DELETE FROM $schema.maintenance')
        const headers = new Headers(request.headers)
        if (headers.get('content-type') === '') headers.delete('content-type')
        const res = await serve(new Request(request, { headers }))
        expect(res.status, `${name} ${request.method}`).toBe(200)
        expect(await ran(), name).toBeGreaterThan(0)
      }
    }
  })

  test('maintainHandler, given a 5 MB HTTP event, answers its JSON 404 and runs nothing', async () => {
    const maintain = maintainHandler(t.sluice, { wakeWaitMs: 0 }) as unknown as LambdaHttp
    const event = httpEventV2('POST', '/maintain', {
      body: big,
      headers: { ...bearer(), 'content-type': 'application/json' },
    })
    const result = await maintain(event, lambdaContext(60_000, 'sluice-dev-maintain'))
    expect(result.statusCode).toBe(404)
    expect(JSON.parse(result.body).error.code).toBe('NOT_FOUND')
    expect(await ran()).toBe(0)
  })
})
