/**
 * The Lambda handlers of `sluice/aws-lambda` given hostile or misdirected events: every one gets a
 * JSON answer in Sluice's error shape, changes nothing, and never reaches the app's error
 * reporter. Well-formed events still reach the app as before.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { z } from 'zod'
import { defineJob, ValidationError } from '../../src/index.js'
import { apiHandler, drainHandler, maintainHandler } from '../../src/platforms/aws-lambda.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { httpEventV2, type LambdaHttpResult, lambdaContext, scheduledEvent } from '../helpers/lambda.js'

const welcome = defineJob({
  name: 'welcome-email',
  input: z.object({ userId: z.string(), email: z.string() }),
  run: () => {},
})

const SECRET = 'lambda-events-secret-0123456789'
const auth = { authorization: `Bearer ${SECRET}` }

type HttpHandler = (event: unknown, context: unknown) => Promise<LambdaHttpResult>

let t: TestSluice
let api: HttpHandler
let drain: HttpHandler
let maintain: (event: unknown, context: unknown) => Promise<unknown>
const reported: unknown[] = []

beforeAll(async () => {
  t = await makeSluice({ jobs: [welcome] })
  const options = { env: { SLUICE_SECRET: SECRET }, onError: (error: unknown) => reported.push(error) }
  api = apiHandler(t.sluice, options) as unknown as HttpHandler
  drain = drainHandler(t.sluice, options) as unknown as HttpHandler
  maintain = maintainHandler(t.sluice) as unknown as typeof maintain
})
afterAll(async () => {
  await t?.cleanup()
})

let stderr: ReturnType<typeof vi.spyOn>
beforeAll(() => {
  stderr = vi.spyOn(console, 'error')
})
afterEach(() => {
  stderr.mockClear()
  reported.length = 0
})

const jobCount = async () => Number((await t.sql('SELECT count(*) AS n FROM $schema.jobs'))[0]!.n)

/** An API Gateway REST API (payload 1.0) event. */
function httpEventV1(
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
) {
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: method,
    headers: { host: 'abc123.execute-api.eu-west-1.amazonaws.com', ...options.headers },
    multiValueHeaders: null,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      httpMethod: method,
      path: `/prod${path}`,
      requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      stage: 'prod',
    },
    body: options.body ?? null,
    isBase64Encoded: false,
  }
}

/** What an Application Load Balancer sends with multi-value headers on. */
function albEvent(method: string, path: string, headers: Record<string, string[]> = {}) {
  return {
    requestContext: {
      elb: { targetGroupArn: 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/t/1' },
    },
    httpMethod: method,
    path,
    multiValueQueryStringParameters: {},
    multiValueHeaders: { host: ['sluice.example.com'], ...headers },
    body: '',
    isBase64Encoded: false,
  }
}

/** The answer is Sluice's JSON error with this status and code; returns the message. */
function expectError(result: LambdaHttpResult, status: number, code: string): string {
  expect(result.statusCode, result.body).toBe(status)
  const contentType =
    result.headers?.['content-type'] ??
    (result as { multiValueHeaders?: Record<string, string[]> }).multiValueHeaders?.['content-type']?.[0]
  expect(contentType).toMatch(/^application\/json/)
  const body = JSON.parse(result.body) as { error: { code: string; message: string } }
  expect(body.error.code).toBe(code)
  expect(body.error.message).toEqual(expect.any(String))
  return body.error.message
}

describe('apiHandler and drainHandler given malformed events', () => {
  test('a body marked base64 that is not base64 is a JSON 400 naming the body, and enqueues nothing', async () => {
    const event = {
      ...httpEventV2('POST', '/jobs/welcome-email', { body: '!!!not base64@@@', headers: auth }),
      isBase64Encoded: true,
    }
    const message = expectError(await api(event, lambdaContext(29_000)), 400, 'INVALID_INPUT')
    expect(message).toMatch(/body/)
    expect(message).toMatch(/base64/)
    expectError(await drain(event, lambdaContext(29_000)), 400, 'INVALID_INPUT')
    expect(await jobCount()).toBe(0)
    expect(reported).toEqual([])
  })

  test('a large body marked base64 (4.6 MB) is answered, not thrown: 401 without credentials, 413 with', async () => {
    const base = httpEventV2('POST', '/jobs/welcome-email', { body: 'A'.repeat(4_600_000) })
    const anonymous = { ...base, isBase64Encoded: true }
    expectError(await api(anonymous, lambdaContext(29_000)), 401, 'UNAUTHORIZED')
    expectError(await drain(anonymous, lambdaContext(29_000)), 401, 'UNAUTHORIZED')
    const signedIn = { ...anonymous, headers: { ...base.headers, ...auth } }
    expectError(await api(signedIn, lambdaContext(29_000)), 413, 'PAYLOAD_TOO_LARGE')
    expect(await jobCount()).toBe(0)
  })

  test("events hono cannot read get a JSON 4xx in Sluice's shape, never its plain text; nothing reaches onError or the database", async () => {
    const body = JSON.stringify({ input: { userId: 'u1', email: 'u1@example.com' } })
    const good = httpEventV2('POST', '/jobs/welcome-email', { body, headers: auth })
    const { requestContext: _rc, ...noRequestContext } = good
    const { http: _http, ...contextWithoutHttp } = good.requestContext
    const { rawPath: _rawPath, ...noRawPath } = good
    const cases: [string, unknown, number][] = [
      ['no requestContext', noRequestContext, 400],
      ['requestContext without http', { ...good, requestContext: contextWithoutHttp }, 400],
      ['no rawPath', noRawPath, 400],
      [
        'a method that is not a token',
        {
          ...good,
          requestContext: { ...good.requestContext, http: { ...good.requestContext.http, method: 'PO ST' } },
        },
        400,
      ],
      ['a header value with a line break', { ...good, headers: { ...good.headers, 'x-note': 'a\nb' } }, 400],
      ['a header name with a space', { ...good, headers: { ...good.headers, 'x note': 'a' } }, 400],
      [
        'a header value with a lone surrogate',
        { ...good, headers: { ...good.headers, 'x-note': 'caf\uD800' } },
        400,
      ],
      ['a header value with a NUL', { ...good, headers: { ...good.headers, 'x-note': 'a\u0000b' } }, 400],
      ['a cookie above U+00FF', { ...good, cookies: ['a=€'] }, 400],
      [
        'a domain that makes no URL',
        { ...good, requestContext: { ...good.requestContext, domainName: 'a b' } },
        400,
      ],
      ['headers that are not an object', { ...good, headers: 'authorization: Bearer x' }, 400],
      ['a body that is not a string', { ...good, body: { input: {} } }, 400],
      [
        'a v1 event without httpMethod',
        { ...httpEventV1('POST', '/jobs/welcome-email', { body, headers: auth }), httpMethod: undefined },
        400,
      ],
      [
        'a v1 event with a query value that is not a list',
        { ...httpEventV1('GET', '/health'), multiValueQueryStringParameters: { a: 'b' } },
        400,
      ],
      [
        'TRACE',
        {
          ...good,
          requestContext: { ...good.requestContext, http: { ...good.requestContext.http, method: 'TRACE' } },
        },
        405,
      ],
    ]
    for (const [name, event] of cases) {
      for (const handler of [api, drain]) {
        const result = await handler(event, lambdaContext(29_000))
        expect(result.statusCode, `${name}: ${result.body}`).toBeGreaterThanOrEqual(400)
        expect(result.statusCode, `${name}: ${result.body}`).toBeLessThan(500)
        const body = JSON.parse(result.body) as { error: { code: string; message: string } }
        expect(body.error, name).toMatchObject({ code: expect.any(String), message: expect.any(String) })
      }
    }
    expect(await jobCount()).toBe(0)
    expect(reported).toEqual([])
  })

  test('an event hono cannot read is a JSON 400 saying so', async () => {
    const good = httpEventV2('GET', '/health')
    const message = expectError(
      await api({ ...good, headers: { ...good.headers, 'x note': 'a' } }, lambdaContext(29_000)),
      400,
      'INVALID_INPUT',
    )
    expect(message).toMatch(/cannot be read as an HTTP request/)
  })

  test('a GET or HEAD carrying a body (function URLs forward them) is served without the body', async () => {
    const v2 = await api(httpEventV2('GET', '/health', { body: '{}' }), lambdaContext(29_000))
    expect(v2.statusCode, v2.body).toBe(200)
    expect(JSON.parse(v2.body)).toMatchObject({ ok: true })
    const v1 = await api(httpEventV1('GET', '/health', { body: '{}' }), lambdaContext(29_000))
    expect(v1.statusCode, v1.body).toBe(200)
    expect(JSON.parse(v1.body)).toMatchObject({ ok: true })
    const head = await api(httpEventV2('HEAD', '/health', { body: '{}' }), lambdaContext(29_000))
    expect(head.statusCode).toBe(200)
    expect(stderr).not.toHaveBeenCalled()
  })

  test('null, undefined and other non-objects are a JSON 400, not a thrown TypeError', async () => {
    for (const event of [null, undefined, 'GET /health', 42, []]) {
      expectError(await api(event, lambdaContext(29_000)), 400, 'INVALID_INPUT')
      expectError(await drain(event, lambdaContext(29_000)), 400, 'INVALID_INPUT')
    }
    expect(stderr).not.toHaveBeenCalled()
  })

  test('an EventBridge schedule sent to the drain says the drain takes an HTTP POST and maintenance is maintainHandler', async () => {
    const message = expectError(await drain(scheduledEvent(), lambdaContext(29_000)), 400, 'INVALID_INPUT')
    expect(message).toMatch(/POST/)
    expect(message).toMatch(/function URL/i)
    expect(message).toMatch(/maintainHandler/)
    expectError(await api(scheduledEvent(), lambdaContext(29_000)), 400, 'INVALID_INPUT')
  })

  test('well-formed events are served as before: v2 with a base64 body, v1 and ALB', async () => {
    const body = JSON.stringify({ input: { userId: 'u2', email: 'u2@example.com' } })
    const encoded = {
      ...httpEventV2('POST', '/jobs/welcome-email', {
        body: Buffer.from(body).toString('base64'),
        headers: auth,
      }),
      isBase64Encoded: true,
    }
    const created = await api(encoded, lambdaContext(29_000))
    expect(created.statusCode, created.body).toBe(202)
    const v1 = await api(
      httpEventV1('POST', '/jobs/welcome-email', {
        body,
        headers: { ...auth, 'content-type': 'application/json' },
      }),
      lambdaContext(29_000),
    )
    expect(v1.statusCode, v1.body).toBe(202)
    const alb = (await api(albEvent('GET', '/health'), lambdaContext(29_000))) as unknown as {
      statusCode: number
      multiValueHeaders: Record<string, string[]>
    }
    expect(alb.statusCode).toBe(200)
    expect(alb.multiValueHeaders['content-type']?.[0]).toMatch(/^application\/json/)
    // A GET to the drain function is still the drain app's 404.
    expectError(await drain(httpEventV2('GET', '/'), lambdaContext(29_000)), 404, 'NOT_FOUND')
    // Without credentials, the drain refuses as before.
    expectError(
      await drain(httpEventV2('POST', '/', { body: '{}' }), lambdaContext(29_000)),
      401,
      'UNAUTHORIZED',
    )
    expect(await jobCount()).toBe(2)
    await t.sql('DELETE FROM $schema.jobs')
  })
})

/** Captures what the handlers write to the console while `run` runs. */
async function consoleOutput(run: () => Promise<void>): Promise<string[]> {
  const written: string[] = []
  const capture = (...args: unknown[]) => {
    written.push(
      args.map((arg) => (arg instanceof Error ? (arg.stack ?? String(arg)) : String(arg))).join(' '),
    )
  }
  const spies = (['error', 'warn', 'log', 'info'] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation(capture),
  )
  try {
    await run()
  } finally {
    for (const spy of spies) spy.mockRestore()
  }
  return written
}

describe('every handler given a malformed direct invocation', () => {
  const good = httpEventV2('POST', '/jobs/welcome-email', { body: '{}', headers: auth })
  const v1 = httpEventV1('POST', '/jobs/welcome-email', { body: '{}', headers: auth })
  // `aws lambda invoke --payload …`: anything JSON, and objects that look like an HTTP event but are not one.
  const malformed: [string, unknown][] = [
    ['{}', {}],
    ['{"foo":1}', { foo: 1 }],
    ['a string', 'GET /health'],
    ['an array', [{ rawPath: '/' }]],
    ['an empty array', []],
    ['null', null],
    ['a number', 42],
    ['true', true],
    ['requestContext a string', { requestContext: 'x' }],
    ['requestContext a number', { requestContext: 5 }],
    ['requestContext.http null', { rawPath: '/', requestContext: { http: null } }],
    ['version 2.0 alone', { version: '2.0' }],
    ['rawPath alone', { rawPath: '/drain' }],
    ['a path that is a number', { path: 1, httpMethod: 'POST' }],
    ['a path that is an object', { path: { a: 1 }, httpMethod: 'POST' }],
    ['a path that makes no URL', { path: ' x', httpMethod: 'POST' }],
    ['httpMethod alone', { httpMethod: 'POST' }],
    ['a method that is a number', { ...v1, httpMethod: 5 }],
    ['multiValueHeaders a string', { ...v1, multiValueHeaders: 'x' }],
    ['a multi-value header that is not a list', { ...v1, multiValueHeaders: { a: 'b' } }],
    ['a body object marked base64', { ...v1, body: { a: 1 }, isBase64Encoded: true }],
    ['isBase64Encoded 1 on a body that is not base64', { ...good, body: '!!!', isBase64Encoded: 1 }],
    ['a GET with an object body', { ...httpEventV1('GET', '/health'), body: { a: 1 } }],
    ['a query value with a lone surrogate', { ...v1, queryStringParameters: { a: '\uD800' } }],
    ['a header value with a lone surrogate', { ...v1, headers: { ...v1.headers, a: '\uD800' } }],
    ['a v2 header value with a lone surrogate', { ...good, headers: { ...good.headers, a: 'x\uDC00' } }],
    [
      'lattice headers that are not lists',
      { requestContext: { serviceArn: 'arn' }, path: '/', method: 'GET', headers: { a: 'b' } },
    ],
    [
      'ALB query values that are not lists',
      { ...albEvent('GET', '/health'), multiValueQueryStringParameters: { a: 'b' } },
    ],
    ['an ALB cookie above U+00FF', albEvent('GET', '/health', { cookie: ['a=€'] })],
    [
      'a domain name that makes no URL',
      { ...v1, requestContext: { ...v1.requestContext, domainName: 'a b' } },
    ],
    ['a host header that makes no URL', { ...v1, requestContext: {}, headers: { host: 'a b' } }],
    ['a v2 cookie that is not a string', { ...good, cookies: [{ a: 1 }] }],
  ]

  test('apiHandler and drainHandler answer each with a JSON 400 INVALID_INPUT, log nothing and reach no route', async () => {
    const answers: [string, LambdaHttpResult][] = []
    const output = await consoleOutput(async () => {
      for (const [name, event] of malformed) {
        answers.push([`api, ${name}`, await api(event, lambdaContext(29_000))])
        answers.push([`drain, ${name}`, await drain(event, lambdaContext(29_000))])
      }
    })
    expect(output).toEqual([])
    for (const [name, result] of answers) {
      expect(expectError(result, 400, 'INVALID_INPUT'), name).toMatch(/HTTP|Lambda event/)
    }
    expect(reported).toEqual([])
    expect(await jobCount()).toBe(0)
  })

  test('maintainHandler answers them without a stack in the logs: an HTTP-looking event is its 404', async () => {
    const output = await consoleOutput(async () => {
      for (const [name, event] of malformed) {
        // What is no HTTP event at all is a manual run, as on its schedule; the rest run nothing.
        const result = (await maintain(event, lambdaContext(60_000, 'sluice-dev-maintain'))) as
          | LambdaHttpResult
          | { tasks: unknown[] }
        if ('tasks' in result) expect(result.tasks.length, name).toBeGreaterThan(0)
        else expectError(result, 404, 'NOT_FOUND')
      }
    })
    expect(output).toEqual([])
    // The next test starts with every task due.
    await t.sql('DELETE FROM $schema.maintenance')
  })
})

describe('maintainHandler given an HTTP event', () => {
  test('refuses function URL, API Gateway and ALB events with a JSON 404 and runs nothing; a schedule still runs it', async () => {
    const events = [
      httpEventV2('POST', '/maintain', { body: '{}' }),
      httpEventV2('GET', '/'),
      httpEventV1('POST', '/maintain', { body: '{}' }),
      albEvent('GET', '/maintain'),
    ]
    for (const event of events) {
      const result = (await maintain(event, lambdaContext(60_000, 'sluice-dev-maintain'))) as LambdaHttpResult
      const message = expectError(result, 404, 'NOT_FOUND')
      expect(message).toMatch(/EventBridge/)
      expect(message).toMatch(/POST \/maintain/)
    }
    // Nothing ran: on the fresh schema every task is still due, so the schedule runs each one.
    const report = (await maintain(scheduledEvent(), lambdaContext(60_000, 'sluice-dev-maintain'))) as {
      tasks: { task: string; ran: boolean }[]
    }
    expect(report.tasks.length).toBeGreaterThan(0)
    expect(report.tasks.filter((task) => !task.ran)).toEqual([])
  })

  test('a batch of records (an SQS or S3 trigger) fails the invocation, naming its source, and runs nothing', async () => {
    // Every task due: a maintenance run would write a row per task.
    await t.sql('DELETE FROM $schema.maintenance')
    for (const [event, source] of [
      [{ Records: [{ eventSource: 'aws:sqs', body: '{}' }] }, 'aws:sqs'],
      [{ Records: [{ eventSource: 'aws:s3', s3: {} }] }, 'aws:s3'],
      [{ Records: [{ EventSource: 'aws:sns', Sns: {} }] }, 'aws:sns'],
    ] as const) {
      const failure = await maintain(event, lambdaContext(60_000, 'sluice-dev-maintain')).catch(
        (error: unknown) => error,
      )
      expect(failure).toBeInstanceOf(ValidationError)
      expect((failure as Error).message).toContain(source)
    }
    expect(await t.sql('SELECT task FROM $schema.maintenance')).toEqual([])
  })
})
