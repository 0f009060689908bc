import fc from 'fast-check'
import type { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { createEdgeClient, createEnqueueApp, defineContract } from '../../src/edge.js'
import { createApp, defineJob, defineSubscriber, fromPg } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { CRON_SECRET, NEXT_SECRET, SECRET, testEnv } from '../helpers/http.js'

// Random and adversarial requests against every route of the HTTP apps, with authentication
// on and off: every answer is 2xx or 4xx, never 5xx, and a 4xx changes no row anywhere (a
// row trigger on every table of the schema counts inserted, updated and deleted rows).
// Seeded: a failure prints its seed and path; rerun it with SLUICE_FUZZ_SEED (and
// SLUICE_FUZZ_RUNS for a longer run).
const SEED = Number(process.env.SLUICE_FUZZ_SEED ?? 20_261_123)
const RUNS = Number(process.env.SLUICE_FUZZ_RUNS ?? 250)
const MAX_PAYLOAD = 4096

type Tree = string | number | Tree[]
const tree: z.ZodType<Tree> = z.lazy(() => z.union([z.string(), z.number(), z.array(tree)]))
const plainContract = defineContract({
  name: 'plain',
  input: z.object({ n: z.number().int(), s: z.string().max(50).optional() }),
})
const jobs = [
  defineJob({ ...plainContract, timeout: 100, run: () => {} }),
  defineJob({ name: 'anything', input: z.unknown(), timeout: 100, run: () => {} }),
  defineJob({ name: 'tree', input: tree, timeout: 100, run: () => {} }),
  defineJob({
    name: 'unique',
    input: z.object({ s: z.string() }),
    unique: { key: (input) => input.s },
    timeout: 100,
    run: () => {},
  }),
  defineJob({
    name: 'limited',
    input: z.object({ s: z.string() }).catchall(z.unknown()),
    concurrency: { limit: 1, key: (input) => input.s.slice(0, 3) || 'k' },
    timeout: 100,
    run: () => {},
  }),
]
const subscribers = [
  defineSubscriber({
    name: 'audit',
    topic: 'fuzz.#',
    input: z.object({ id: z.string() }),
    timeout: 100,
    run: () => {},
  }),
  defineSubscriber({ name: 'firehose', topic: '#', timeout: 100, run: () => {} }),
]

interface Target {
  name: string
  app: Hono
}

let t: TestSluice
const targets: Target[] = []
const reported: unknown[] = []
const statuses = new Map<string, number>()

beforeAll(async () => {
  t = await makeSluice({ jobs, subscribers, maxPayloadBytes: MAX_PAYLOAD })
  await countWrites()
  const onError = (error: unknown) => void reported.push(error)
  const edge = createEdgeClient({
    database: fromPg(t.admin),
    jobs: [plainContract],
    schema: t.schema,
    maxPayloadBytes: MAX_PAYLOAD,
  })
  targets.push(
    { name: 'auth on', app: createApp(t.sluice, { env: testEnv, onError }) },
    { name: 'auth off', app: createApp(t.sluice, { auth: false, onError }) },
    { name: 'edge', app: createEnqueueApp(edge, { env: testEnv, onError }) },
  )
})
afterAll(() => t.cleanup())

/** Every row any statement inserts, updates or deletes in the schema bumps one counter, transactionally. */
async function countWrites(): Promise<void> {
  const schema = `"${t.schema}"`
  await t.sql(
    `CREATE TABLE $schema.fuzz_writes (n bigint NOT NULL); INSERT INTO $schema.fuzz_writes VALUES (0)`,
  )
  await t.sql(`CREATE FUNCTION $schema.fuzz_count() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  UPDATE ${schema}.fuzz_writes SET n = n + 1;
  RETURN NULL;
END $fn$`)
  const tables = await t.sql<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
     WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name <> 'fuzz_writes'`,
    [t.schema],
  )
  expect(tables.length).toBeGreaterThan(15)
  for (const { name } of tables) {
    await t.sql(
      `CREATE TRIGGER fuzz_count AFTER INSERT OR UPDATE OR DELETE ON $schema."${name}"
       FOR EACH ROW EXECUTE FUNCTION $schema.fuzz_count()`,
    )
  }
}

async function writes(): Promise<number> {
  const [row] = await t.sql<{ n: string }>('SELECT n FROM $schema.fuzz_writes')
  return Number(row!.n)
}

// ---------------------------------------------------------------------------------------------
// What a request is made of

type Bytes = Uint8Array<ArrayBuffer>
type Body = string | Bytes | { stream: Bytes[] } | undefined

interface FuzzRequest {
  method: string
  path: string
  headers: [string, string][]
  body: Body
}

const utf8 = (text: string): Bytes => new TextEncoder().encode(text)
const utf16le = (text: string): Bytes => {
  const bytes = new Uint8Array(text.length * 2)
  for (let i = 0; i < text.length; i++) {
    bytes[i * 2] = text.charCodeAt(i) & 0xff
    bytes[i * 2 + 1] = text.charCodeAt(i) >> 8
  }
  return bytes
}
const nest = (levels: number, leaf: string): string => '['.repeat(levels) + leaf + ']'.repeat(levels)

const NASTY_STRINGS = [
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udc00',
  '\udbff\udbff',
  '\udc00\ud800',
  '😀',
  '\u202e',
  '\ufeff',
  '\uffff',
  '\\u0000',
  '%00',
  "'; DROP TABLE jobs; --",
  'x'.repeat(3_000),
]
const nastyString = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom(...NASTY_STRINGS))
const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 5e-324, 3_600_000, 32_767, 32_768),
)
const key = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'n',
    's',
    'id',
    'input',
    'payload',
    '\u0000',
    '\ud800',
  ),
)
const { value: jsonish } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    nastyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 4 }),
  ),
}))
const runAt = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    new Date().toISOString(),
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '+275760-09-13T00:00:00.000Z',
    '2026-13-45T99:99:99Z',
    'tomorrow',
    '',
  ),
  jsonish,
)
/** Objects shaped like the routes' bodies, each field valid, hostile or of the wrong type. */
const envelope = fc.record(
  {
    input: jsonish,
    payload: jsonish,
    delay: fc.oneof(nastyNumber, jsonish),
    runAt,
    priority: fc.oneof(nastyNumber, jsonish),
    eventId: fc.oneof(nastyString, jsonish),
    headers: fc.oneof(fc.dictionary(key, fc.oneof(nastyString, jsonish), { maxKeys: 4 }), jsonish),
    queues: fc.oneof(fc.array(fc.oneof(fc.constantFrom('default'), nastyString), { maxLength: 3 }), jsonish),
    budgetMs: fc.oneof(fc.integer({ min: 1, max: 2_000 }), nastyNumber),
    maxJobs: fc.oneof(fc.integer({ min: 1, max: 50 }), nastyNumber),
    concurrency: fc.oneof(fc.integer({ min: 1, max: 4 }), nastyNumber),
    wakeId: nastyString,
    extra: jsonish,
  },
  { requiredKeys: [] },
)
/** Bodies that pass the envelope checks of each route, so that the checks behind them are reached. */
const plausible = {
  jobs: fc.oneof(
    fc.record({ input: fc.record({ n: fc.integer(), s: fc.option(nastyString, { nil: undefined }) }) }),
    fc.record({ input: fc.record({ s: nastyString }) }),
    fc.record({ input: jsonish }),
    fc.record({ input: fc.record({ n: fc.integer() }), delay: fc.nat(), priority: fc.nat(40_000), runAt }),
  ),
  events: fc.oneof(
    fc.record({ payload: fc.oneof(fc.record({ id: nastyString }), jsonish) }),
    fc.record({
      payload: jsonish,
      eventId: fc.oneof(fc.uuid(), nastyString),
      headers: fc.dictionary(fc.constantFrom('tenant', 'trace'), nastyString),
    }),
  ),
  drain: fc.oneof(
    fc.constant({}),
    fc.record(
      {
        budgetMs: fc.integer({ min: 1, max: 2_000 }),
        maxJobs: fc.integer({ min: 1, max: 20 }),
        queues: fc.array(fc.constantFrom('default', 'other', 'a:b'), { minLength: 1, maxLength: 2 }),
        concurrency: fc.integer({ min: 1, max: 4 }),
      },
      { requiredKeys: [] },
    ),
  ),
  other: fc.constant({}),
}

const FIXED_BODIES: Body[] = [
  '{"input": {"n": 1e400}}',
  '{"input": {"n": 123456789012345678901234567890}}',
  '{"input": {"n": -0}}',
  '{"payload": 1e999}',
  '{"delay": 1e400, "input": 1}',
  '{"priority": 1e-400, "input": 1}',
  '{"budgetMs": 1e400}',
  '[]',
  '[{"input": {"n": 1}}]',
  'null',
  'true',
  '"input"',
  '0',
  '{"__proto__": {"input": {"n": 1}}}',
  '{"input": {"__proto__": {"isAdmin": true}, "n": 1}}',
  '{"constructor": {"prototype": {"polluted": true}}, "input": 1}',
  '{"input": {"n": 1}, "input": {"n": 2}}',
  '{"input": "\\u0000"}',
  '{"input": {"n": 1, "s": "\\ud800"}}',
  '{"payload": {"\\u0000": 1}}',
  '{"payload": {"id": "x"}, "headers": {"a": "\\udfff"}}',
  '{"payload": {"id": "x"}, "eventId": "\\u0000"}',
  '{"queues": ["\\u0000"]}',
  '{"wakeId": "\\ud800"}',
  `{"input": ${nest(5_000, '1')}}`,
  `{"payload": ${nest(5_000, '"x"')}}`,
  `{"input": ${nest(101, '1')}}`,
  `{"payload": {"id": "x"}, "headers": ${nest(5_000, '1')}}`,
  `{"queues": ${nest(5_000, '"default"')}}`,
  nest(100_000, '1'),
  `{"input": "${'x'.repeat(MAX_PAYLOAD)}"}`,
  `{"input": "${'x'.repeat(300_000)}"}`,
  '{',
  '{"input":',
  '{"input": {"n": 1}}\u0000',
  '\u0000',
  'input=1&delay=2',
  '--x\r\nContent-Disposition: form-data; name="input"\r\n\r\n1\r\n--x--',
  '',
  '   ',
  new Uint8Array([0xff, 0xfe]),
  new Uint8Array([0xed, 0xa0, 0x80]),
  new Uint8Array([0xc0, 0x80]),
  new Uint8Array([0xef, 0xbb, 0xbf]),
  new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('{"input": {"n": 1}}')]),
  utf16le('{"input": {"n": 1}}'),
  { stream: [utf8('{"input": '), utf8('{"n": 1}}')] },
  { stream: [utf8('{"input": "'), new Uint8Array(MAX_PAYLOAD + 8_192).fill(0x61), utf8('"}')] },
  undefined,
]

const anyBody: fc.Arbitrary<Body> = fc.oneof(
  { arbitrary: fc.constantFrom(...FIXED_BODIES), weight: 2 },
  { arbitrary: envelope.map((b) => JSON.stringify(b)), weight: 3 },
  { arbitrary: jsonish.map((b) => JSON.stringify(b) ?? 'null'), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 1 },
  { arbitrary: envelope.map((b) => utf16le(JSON.stringify(b))), weight: 1 },
  {
    arbitrary: fc.tuple(plausible.jobs, fc.integer({ min: 1, max: 4 })).map(([b, n]) => {
      const bytes = utf8(JSON.stringify(b))
      const size = Math.ceil(bytes.length / n)
      return { stream: Array.from({ length: n }, (_, i) => bytes.slice(i * size, (i + 1) * size)) }
    }),
    weight: 1,
  },
)

/** Half the time a body the route's envelope accepts; otherwise anything. */
const bodyFor = (kind: keyof typeof plausible): fc.Arbitrary<Body> =>
  fc.oneof(
    { arbitrary: plausible[kind].map((b) => JSON.stringify(b)), weight: 1 },
    { arbitrary: anyBody, weight: 1 },
  )

const WEIRD_SEGMENTS = [
  '',
  '.',
  '..',
  '%00',
  '%ZZ',
  '%F0%9F',
  '%ED%A0%80',
  '%2F',
  'a%2Fb',
  '*',
  '#',
  '%23',
  'x'.repeat(300),
  '__proto__',
  'constructor',
]
const segment = (usual: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: usual, weight: 6 },
    { arbitrary: fc.constantFrom(...WEIRD_SEGMENTS), weight: 2 },
    { arbitrary: fc.string({ maxLength: 20 }).map(encodeURIComponent), weight: 1 },
    { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
  )
const jobName = segment(
  fc.oneof(
    { arbitrary: fc.constant('plain'), weight: 3 },
    fc.constantFrom('anything', 'tree', 'unique', 'limited', 'audit'),
  ),
)
const topic = segment(fc.constantFrom('fuzz.created', 'fuzz.a.b', 'other', 'a.b.c.d', 'fuzz.#', 'fuzz.*'))
/** Each route with the method it serves; now and then another method. */
const route = fc
  .tuple(
    fc.oneof(
      { arbitrary: jobName.map((s) => ['POST', `/jobs/${s}`] as const), weight: 5 },
      { arbitrary: topic.map((s) => ['POST', `/events/${s}`] as const), weight: 4 },
      {
        arbitrary: fc.constantFrom(
          ['POST', '/drain'] as const,
          ['POST', '/drain?budgetMs=1'] as const,
          ['GET', '/maintain'] as const,
          ['POST', '/maintain'] as const,
          ['POST', '/maintain?x=%00'] as const,
          ['GET', '/health'] as const,
          ['HEAD', '/health'] as const,
          ['GET', '/metrics'] as const,
        ),
        weight: 3,
      },
      {
        arbitrary: fc
          .constantFrom(
            '/',
            '/jobs',
            '/jobs/',
            '/events/',
            '/nope',
            '//drain',
            '/drain/',
            '/DRAIN',
            '/jobs/plain/x',
          )
          .map((p) => ['POST', p] as const),
        weight: 1,
      },
    ),
    fc.oneof(
      { arbitrary: fc.constant(null), weight: 8 },
      fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
    ),
  )
  .map(([[usual, p], other]) => ({ method: other ?? usual, path: p }))

const kindOf = (path: string): keyof typeof plausible =>
  path.startsWith('/jobs/')
    ? 'jobs'
    : path.startsWith('/events/')
      ? 'events'
      : path.startsWith('/drain')
        ? 'drain'
        : 'other'

/** Header values a client can send: bytes 0x20..0xff. */
const headerValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc.constantFrom('', ' ', 'é', '\u00ff'.repeat(100)),
)
const contentType = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
      'application/jsonx',
      '',
    ),
    weight: 2,
  },
  { arbitrary: headerValue, weight: 1 },
)
const authorization = fc.oneof(
  { arbitrary: fc.constant(`Bearer ${SECRET}`), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      `Bearer ${NEXT_SECRET}`,
      `Bearer ${CRON_SECRET}`,
      `bearer ${SECRET}`,
      `Bearer  ${SECRET}  `,
      `Bearer ${SECRET}x`,
      `Bearer ${SECRET.slice(0, -1)}`,
      `Bearer ${SECRET} ${SECRET}`,
      'Bearer',
      'Basic YTpi',
      `Bearer ${'x'.repeat(5_000)}`,
    ),
    weight: 2,
  },
  { arbitrary: headerValue.map((v) => `Bearer ${v}`), weight: 1 },
)
const otherHeader = fc.oneof(
  fc.tuple(
    fc.constant('content-length'),
    fc.constantFrom('0', '1', '-1', 'abc', '99999999999', '1e3', ' 12 ', '4096'),
  ),
  fc.tuple(
    fc.constant('sluice-timestamp'),
    fc.constantFrom(String(Date.now()), '0', '-1', 'abc', '9'.repeat(20)),
  ),
  fc.tuple(
    fc.constant('sluice-signature'),
    fc.oneof(
      fc.stringMatching(/^v1=[0-9a-f]{64}$/),
      fc.constantFrom('v1=', 'v2=00', `v1=${'zz'.repeat(32)}`),
      headerValue,
    ),
  ),
  fc.tuple(fc.constantFrom('host', 'origin', 'referer', 'x-forwarded-host', 'sec-fetch-site'), headerValue),
  fc.tuple(fc.constantFrom('content-encoding', 'accept', 'accept-charset', 'x-request-id'), headerValue),
  fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), headerValue),
)
const headers = fc
  .tuple(
    fc.option(contentType, { freq: 5 }),
    fc.option(authorization, { freq: 4 }),
    fc.array(otherHeader, { maxLength: 3 }),
  )
  .map(([type, auth, rest]) => {
    const out: [string, string][] = []
    if (type !== null) out.push(['content-type', type])
    if (auth !== null) out.push(['authorization', auth])
    return [...out, ...rest]
  })

const request: fc.Arbitrary<FuzzRequest> = route.chain(({ method, path }) =>
  fc.record({ method: fc.constant(method), path: fc.constant(path), headers, body: bodyFor(kindOf(path)) }),
)

// ---------------------------------------------------------------------------------------------
// Sending one and checking the answer

function toRequest(r: FuzzRequest): Request | undefined {
  const init: RequestInit & { duplex?: 'half' } = { method: r.method, headers: r.headers }
  if (r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD') {
    if (typeof r.body === 'string' || r.body instanceof Uint8Array) init.body = r.body
    else {
      const chunks = r.body.stream
      init.body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = chunks.shift()
          if (chunk) controller.enqueue(chunk)
          else controller.close()
        },
      })
      init.duplex = 'half'
    }
  }
  try {
    return new Request(`http://localhost${r.path}`, init)
  } catch {
    // No client can send it (a header the fetch standard forbids, an impossible URL).
    return undefined
  }
}

function describeRequest(r: FuzzRequest): string {
  const shown =
    typeof r.body === 'string'
      ? JSON.stringify(r.body.slice(0, 300))
      : r.body instanceof Uint8Array
        ? `bytes[${r.body.length}]`
        : r.body
          ? 'stream'
          : 'none'
  return `${r.method} ${JSON.stringify(r.path.slice(0, 200))} headers=${JSON.stringify(r.headers)} body=${shown}`
}

async function check(target: Target, r: FuzzRequest): Promise<void> {
  const req = toRequest(r)
  if (!req) return
  reported.length = 0
  const before = await writes()
  const res = await target.app.request(req)
  const text = await res.text()
  const route = r.path.split('/')[1] ?? ''
  const bucket = `${target.name} ${route} ${res.status}`
  statuses.set(bucket, (statuses.get(bucket) ?? 0) + 1)
  if (!((res.status >= 200 && res.status < 300) || (res.status >= 400 && res.status < 500))) {
    throw new Error(
      `${target.name}: ${res.status} ${text.slice(0, 300)} for ${describeRequest(r)}; reported: ${reported.map(String).join(' | ')}`,
    )
  }
  if (res.status >= 400) {
    const after = await writes()
    if (after !== before) {
      throw new Error(
        `${target.name}: ${res.status} changed ${after - before} rows for ${describeRequest(r)}`,
      )
    }
    if (r.method !== 'HEAD') {
      let error: { code?: unknown; message?: unknown } | undefined
      try {
        error = (JSON.parse(text) as { error?: typeof error }).error
      } catch {}
      if (typeof error?.code !== 'string' || typeof error.message !== 'string') {
        throw new Error(
          `${target.name}: ${res.status} without the error body: ${text.slice(0, 200)} for ${describeRequest(r)}`,
        )
      }
    }
  }
}

describe('HTTP fuzz: never a 5xx, and a 4xx writes nothing', () => {
  test('the write counter sees every row a request writes', async () => {
    const before = await writes()
    const res = await targets[1]!.app.request('/jobs/plain', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"input": {"n": 1}}',
    })
    expect(res.status).toBe(202)
    expect(await writes()).toBeGreaterThan(before)
  })

  test('the fixed adversarial bodies, on every write route, with and without credentials', async () => {
    const routes = [
      '/jobs/plain',
      '/jobs/anything',
      '/jobs/tree',
      '/events/fuzz.created',
      '/drain',
      '/maintain',
    ]
    const bearer: [string, string][] = [['authorization', `Bearer ${SECRET}`]]
    const cases: [Target, string[], [string, string][][]][] = [
      [targets[0]!, routes, [bearer, []]],
      [targets[1]!, routes, [[]]],
      [targets[2]!, ['/jobs/plain', '/events/fuzz.created'], [bearer, []]],
    ]
    for (const [target, paths, auths] of cases) {
      for (const p of paths) {
        for (const b of FIXED_BODIES) {
          for (const auth of auths) {
            const copy = typeof b === 'object' && 'stream' in b ? { stream: [...b.stream] } : b
            await check(target, {
              method: 'POST',
              path: p,
              headers: [['content-type', 'application/json'], ...auth],
              body: copy,
            })
          }
        }
      }
    }
  })

  test(`random requests (seed ${SEED}, ${RUNS} per app)`, async () => {
    statuses.clear()
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: targets.length - 1 }), request, async (i, r) => {
        const copy =
          r.body && typeof r.body === 'object' && 'stream' in r.body
            ? { ...r, body: { stream: [...r.body.stream] } }
            : r
        await check(targets[i]!, copy)
      }),
      { seed: SEED, numRuns: RUNS * targets.length },
    )
    // The fuzz reached past authentication and the body checks: writes and refusals both happened.
    const seen = (pattern: RegExp): number =>
      [...statuses].filter(([bucket]) => pattern.test(bucket)).reduce((sum, [, n]) => sum + n, 0)
    const histogram = JSON.stringify(Object.fromEntries(statuses))
    expect(seen(/^auth (on|off) jobs 202$/), histogram).toBeGreaterThan(0)
    expect(seen(/^auth (on|off) events 202$/), histogram).toBeGreaterThan(0)
    expect(seen(/^edge jobs 202$/), histogram).toBeGreaterThan(0)
    expect(seen(/ jobs 400$/), histogram).toBeGreaterThan(0)
    expect(seen(/ events 400$/), histogram).toBeGreaterThan(0)
    expect(seen(/^auth on \w+ 401$/), histogram).toBeGreaterThan(0)
    expect(seen(/ drain 200$/), histogram).toBeGreaterThan(0)
    expect(seen(/ maintain 200$/), histogram).toBeGreaterThan(0)
  })
})
