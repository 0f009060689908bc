import type { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { ConfigError, createApp, defineJob, sign } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import {
  appFor,
  bearer,
  CRON_SECRET,
  countJobs,
  errorOf,
  NEXT_SECRET,
  postJson,
  SECRET,
  testEnv,
} from '../helpers/http.js'

const greet = defineJob({ name: 'greet', input: z.object({ who: z.string() }), run: () => {} })
const body = JSON.stringify({ input: { who: 'signed' } })
/** What a request to POST /jobs/greet signs. */
const greetRequest = (sent: string = body) => ({ method: 'POST', path: '/jobs/greet', body: sent })

describe('route auth', () => {
  let t: TestSluice
  let app: Hono

  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet] })
    app = appFor(t)
  })
  afterAll(() => t.cleanup())
  beforeEach(async () => {
    await t.sql('DELETE FROM $schema.jobs')
    t.statements.reset()
  })

  /** Expects a 401 UNAUTHORIZED that ran no statement and wrote nothing. */
  async function expectRejected(res: Response): Promise<void> {
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
    expect(await errorOf(res)).toEqual({ code: 'UNAUTHORIZED', message: 'Missing or invalid credentials.' })
    expect(t.statements.count).toBe(0)
    expect(await countJobs(t)).toBe(0)
  }

  const signedPost = (headers: Record<string, string>, sent: string = body): Promise<Response> =>
    postJson(app, '/jobs/greet', sent, headers)

  test.each([
    ['no credentials', {}],
    ['a wrong bearer token', bearer('sk_wrong_0000000000000000')],
    ['a prefix of the token', bearer(SECRET.slice(0, -1))],
    ['the token with a suffix', bearer(`${SECRET}x`)],
    ['another scheme', { Authorization: `Basic ${SECRET}` }],
    ['an empty bearer', { Authorization: 'Bearer ' }],
  ])('%s: 401, nothing touched', async (_, headers) => {
    await expectRejected(await signedPost(headers))
    await expectRejected(await app.request('/drain', { method: 'POST', headers }))
    await expectRejected(await app.request('/maintain', { headers }))
  })

  test('both rotating tokens are accepted', async () => {
    expect((await signedPost(bearer(SECRET))).status).toBe(202)
    expect((await signedPost(bearer(NEXT_SECRET))).status).toBe(202)
    expect((await signedPost({ Authorization: `bearer ${SECRET}` })).status).toBe(202)
    expect(await countJobs(t)).toBe(2 + 1)
  })

  test('a signed request is accepted, with either secret', async () => {
    expect((await signedPost(await sign(SECRET, greetRequest()))).status).toBe(202)
    expect((await signedPost(await sign(NEXT_SECRET, greetRequest()))).status).toBe(202)
    expect(await countJobs(t)).toBe(2)
  })

  test('a signed GET /maintain (empty body) is accepted', async () => {
    const res = await app.request('/maintain', {
      headers: await sign(SECRET, { method: 'GET', path: '/maintain' }),
    })
    expect(res.status).toBe(200)
  })

  test('signed with a wrong secret: 401', async () => {
    await expectRejected(await signedPost(await sign('sk_attacker_guess_12345678', greetRequest())))
  })

  test('a tampered body: 401', async () => {
    const headers = await sign(SECRET, greetRequest())
    await expectRejected(await signedPost(headers, body.replace('signed', 'forged')))
  })

  test('a tampered timestamp: 401', async () => {
    const headers = await sign(SECRET, greetRequest())
    const moved = { ...headers, 'Sluice-Timestamp': String(Number(headers['Sluice-Timestamp']) + 1) }
    await expectRejected(await signedPost(moved))
  })

  test('expired and future timestamps: 401', async () => {
    await expectRejected(await signedPost(await sign(SECRET, greetRequest(), Date.now() - 301_000)))
    await expectRejected(await signedPost(await sign(SECRET, greetRequest(), Date.now() + 301_000)))
    // Inside the window either way is fine.
    expect((await signedPost(await sign(SECRET, greetRequest(), Date.now() + 60_000))).status).toBe(202)
  })

  test('malformed signature headers: 401', async () => {
    const good = await sign(SECRET, greetRequest())
    await expectRejected(await signedPost({ 'Sluice-Signature': good['Sluice-Signature'] }))
    await expectRejected(await signedPost({ 'Sluice-Timestamp': good['Sluice-Timestamp'] }))
    await expectRejected(await signedPost({ ...good, 'Sluice-Signature': 'v1=zz' }))
    await expectRejected(await signedPost({ ...good, 'Sluice-Signature': good['Sluice-Signature'].slice(3) }))
    await expectRejected(await signedPost({ ...good, 'Sluice-Timestamp': 'yesterday' }))
  })

  test('a replayed request: 401 the second time, nothing touched', async () => {
    const headers = await sign(SECRET, greetRequest())
    expect((await signedPost(headers)).status).toBe(202)
    await t.sql('DELETE FROM $schema.jobs')
    t.statements.reset()
    await expectRejected(await signedPost(headers))
    // The same signature with upper-case hex is the same signature.
    const upper = {
      ...headers,
      'Sluice-Signature': `v2=${headers['Sluice-Signature'].slice(3).toUpperCase()}`,
    }
    await expectRejected(await signedPost(upper))
  })

  test('concurrent copies of one signed request: exactly one passes', async () => {
    const headers = await sign(SECRET, greetRequest())
    const results = await Promise.all(Array.from({ length: 5 }, () => signedPost(headers)))
    expect(results.map((r) => r.status).sort()).toEqual([202, 401, 401, 401, 401])
    expect(await countJobs(t)).toBe(1)
  })
})

describe('createApp fails closed', () => {
  let t: TestSluice
  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet] })
  })
  afterAll(() => t.cleanup())

  /** The error a 500 from `app` reported, after checking that it wrote nothing. */
  async function firstUseError(options: Parameters<typeof createApp>[1]): Promise<Error> {
    await t.sql('DELETE FROM $schema.jobs')
    const reported: unknown[] = []
    // Created without the environment it needs: nothing is checked until a request needs it.
    const app = createApp(t.sluice, { ...options, onError: (error) => reported.push(error) })
    const res = await postJson(app, '/jobs/greet', { input: { who: 'x' } }, bearer(SECRET))
    expect(res.status).toBe(500)
    expect(await countJobs(t)).toBe(0)
    expect(reported).toHaveLength(1)
    expect(reported[0]).toBeInstanceOf(ConfigError)
    return reported[0] as Error
  }

  test('no secret anywhere: the app is created (a build has no environment), and every request needing one fails', async () => {
    expect((await firstUseError({ env: {} })).message).toMatch(/no secret: set SLUICE_SECRET/)
    expect((await firstUseError({ env: { SLUICE_SECRET: ' , ' } })).message).toMatch(/no secret/)
    // /health needs no secret.
    expect((await createApp(t.sluice, { env: {} }).request('/health')).status).toBe(200)
  })

  test('auth: false serves everything unauthenticated', async () => {
    const open = createApp(t.sluice, { env: {}, auth: false })
    expect((await postJson(open, '/jobs/greet', { input: { who: 'dev' } }, {})).status).toBe(202)
  })

  test('bad secrets are refused at the first request, naming the variable, without being echoed', async () => {
    const attempts: [Record<string, string>, RegExp][] = [
      [{ SLUICE_SECRET: 'short_secret_x' }, /^SLUICE_SECRET must be at least 16 characters/],
      [{ SLUICE_SECRET: `${SECRET},${NEXT_SECRET},${SECRET}x` }, /^SLUICE_SECRET takes at most two/],
      [{ SLUICE_SECRET: `${SECRET},${SECRET}` }, /^SLUICE_SECRET lists the same secret twice/],
      [{ SLUICE_SECRET: `${SECRET},short_secret_x` }, /^SLUICE_SECRET \(secret 2\) must be at least 16/],
      [{ SLUICE_SECRET: SECRET, CRON_SECRET: 'tiny_cron_x' }, /^CRON_SECRET must be at least 16/],
    ]
    for (const [env, message] of attempts) {
      const error = await firstUseError({ env })
      expect(error.message).toMatch(message)
      expect(error.message).not.toContain('tokens')
      expect(error.message).not.toMatch(/short_secret_x|tiny_cron_x/)
    }
    const explicit = await firstUseError({ env: {}, auth: { secrets: ['short_secret_x'] } })
    expect(explicit.message).toMatch(/^auth\.secrets must be at least 16/)
  })

  test('explicit secrets win over the environment', async () => {
    const explicit = createApp(t.sluice, {
      env: { SLUICE_SECRET: SECRET },
      auth: { secrets: [NEXT_SECRET] },
      onError: () => {},
    })
    expect((await explicit.request('/maintain', { headers: bearer(SECRET) })).status).toBe(401)
    expect((await explicit.request('/maintain', { headers: bearer(NEXT_SECRET) })).status).toBe(200)
  })

  test('only CRON_SECRET: /maintain opens to cron, write routes stay shut', async () => {
    const cronOnly = createApp(t.sluice, { env: { CRON_SECRET }, onError: () => {} })
    const cron = bearer(CRON_SECRET)
    expect((await cronOnly.request('/maintain', { headers: cron })).status).toBe(200)
    expect((await postJson(cronOnly, '/drain', {}, cron)).status).toBe(401)
  })

  test('bad app options are a ConfigError', () => {
    const bad = { env: {}, auth: false, unknown: 1 } as Parameters<typeof createApp>[1]
    expect(() => createApp(t.sluice, bad)).toThrow(ConfigError)
    const stringly = { env: testEnv, auth: { publicMetrics: 'false' } } as unknown as Parameters<
      typeof createApp
    >[1]
    expect(() => createApp(t.sluice, stringly)).toThrow(/publicMetrics/)
    const typo = { env: testEnv, auth: { secret: SECRET } } as Parameters<typeof createApp>[1]
    expect(() => createApp(t.sluice, typo)).toThrow(ConfigError)
  })
})
