import type { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { z } from 'zod'
import { defineJob, sign } from '../../src/index.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'
import { appFor, countJobs, errorOf, postJson, SECRET } from '../helpers/http.js'

const greet = defineJob({ name: 'greet', input: z.object({ who: z.string() }), run: () => {} })
const other = defineJob({ name: 'other', input: z.object({ who: z.string() }), run: () => {} })

/** The signature format before v2: HMAC-SHA256 of "<timestamp>.<body>", bound to nothing else. */
async function signV1(secret: string, body: string, timestamp = Date.now()): Promise<Record<string, string>> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const mac = new Uint8Array(
    await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${timestamp}.${body}`)),
  )
  const hex = [...mac].map((b) => b.toString(16).padStart(2, '0')).join('')
  return { 'Sluice-Timestamp': String(timestamp), 'Sluice-Signature': `v1=${hex}` }
}

describe('a signature binds method, path and body', () => {
  let t: TestSluice
  let app: Hono
  let strict: Hono

  beforeAll(async () => {
    t = await makeSluice({ jobs: [greet, other] })
    app = appFor(t)
    strict = appFor(t, { auth: { legacySignatures: false } })
  })
  afterAll(() => t.cleanup())
  beforeEach(async () => {
    await t.sql('DELETE FROM $schema.jobs')
    t.statements.reset()
  })

  async function expectRefused(res: Response): Promise<void> {
    expect(res.status).toBe(401)
    expect((await errorOf(res)).code).toBe('UNAUTHORIZED')
    expect(t.statements.count).toBe(0)
    expect(await countJobs(t)).toBe(0)
  }

  test('signed for /drain: refused at /maintain, and the genuine request still passes', async () => {
    const headers = await sign(SECRET, { method: 'POST', path: '/drain', body: '{}' })
    await expectRefused(await postJson(app, '/maintain', '{}', headers))
    expect((await postJson(app, '/drain', '{}', headers)).status).toBe(200)
  })

  test('accepted once per process, whichever app serves the route (Next.js loads one per route)', async () => {
    // The lean drain route and the catch-all are two apps; both serve /drain.
    const second = appFor(t)
    const headers = await sign(SECRET, { method: 'POST', path: '/drain', body: '{}' })
    expect((await postJson(app, '/drain', '{}', headers)).status).toBe(200)
    t.statements.reset()
    await expectRefused(await postJson(second, '/drain', '{}', headers))
  })

  test('signed for one job: refused for another', async () => {
    const body = JSON.stringify({ input: { who: 'x' } })
    const headers = await sign(SECRET, { method: 'POST', path: '/jobs/greet', body })
    await expectRefused(await postJson(app, '/jobs/other', body, headers))
    expect((await postJson(app, '/jobs/greet', body, headers)).status).toBe(202)
  })

  test('a changed body is refused', async () => {
    const body = JSON.stringify({ input: { who: 'x' } })
    const headers = await sign(SECRET, { method: 'POST', path: '/jobs/greet', body })
    await expectRefused(await postJson(app, '/jobs/greet', body.replace('x', 'y'), headers))
  })

  test('a changed method is refused: a signed GET /maintain does not pass as POST', async () => {
    const headers = await sign(SECRET, { method: 'GET', path: '/maintain' })
    await expectRefused(await app.request('/maintain', { method: 'POST', headers }))
    expect((await app.request('/maintain', { headers })).status).toBe(200)
  })

  test('mounted under a prefix, the signed path is still the route', async () => {
    const { Hono } = await import('hono')
    const parent = new Hono()
    parent.route('/api/sluice', app)
    const headers = await sign(SECRET, { method: 'POST', path: '/drain', body: '{}' })
    expect((await postJson(parent, '/api/sluice/drain', '{}', headers)).status).toBe(200)
  })

  test('the legacy v1 format passes while legacySignatures allows it (the default), and not after', async () => {
    const body = JSON.stringify({ input: { who: 'legacy' } })
    expect((await postJson(app, '/jobs/greet', body, await signV1(SECRET, body))).status).toBe(202)
    await t.sql('DELETE FROM $schema.jobs')
    t.statements.reset()
    await expectRefused(await postJson(strict, '/jobs/greet', body, await signV1(SECRET, body)))
    // v2 still passes there.
    const headers = await sign(SECRET, { method: 'POST', path: '/jobs/greet', body })
    expect((await postJson(strict, '/jobs/greet', body, headers)).status).toBe(202)
  })

  test('legacySignatures must be a boolean', () => {
    expect(() => appFor(t, { auth: { legacySignatures: 'no' as never } })).toThrow(/legacySignatures/)
  })
})
