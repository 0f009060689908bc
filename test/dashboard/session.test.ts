import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { sameDashboard } from '../../src/http/dashboard/security.js'
import {
  csrfToken,
  newSession,
  SESSION_TTL_MS,
  secretMatches,
  sessionId,
  sessionKeys,
  verifyCsrf,
  verifySession,
} from '../../src/http/dashboard/session.js'
import { quoteSchema } from '../../src/names.js'
import {
  endSession,
  type LoginGateRow,
  loginSucceeded,
  sessionEnded,
  takeLoginAttempt,
} from '../../src/sql/dashboard.js'
import { makeSluice, type TestSluice } from '../helpers/db.js'

const SECRET = 'sk_current_2f6b1c8e9a0d4e7f'
const NEXT = 'sk_next_7c1d9e2a4b6f8031a5'

describe('dashboard sessions', () => {
  test('a session is valid until it expires, then not', async () => {
    const keys = await sessionKeys([SECRET])
    const now = Date.now()
    const token = await newSession(keys, now)
    expect(await verifySession(keys, token, now + SESSION_TTL_MS - 1)).toBeDefined()
    expect(await verifySession(keys, token, now + SESSION_TTL_MS)).toBeUndefined()
  })

  test('a session signed with either rotating secret is valid; one from another secret is not', async () => {
    const rotating = await sessionKeys([NEXT, SECRET])
    expect(await verifySession(rotating, await newSession(await sessionKeys([SECRET])))).toBeDefined()
    expect(await verifySession(rotating, await newSession(await sessionKeys([NEXT])))).toBeDefined()
    const other = await newSession(await sessionKeys(['sk_someone_else_00000000']))
    expect(await verifySession(rotating, other)).toBeUndefined()
  })

  test('malformed and tampered sessions are refused', async () => {
    const keys = await sessionKeys([SECRET])
    const token = await newSession(keys)
    const [expires, nonce, mac] = token.split('.') as [string, string, string]
    for (const bad of [
      undefined,
      '',
      'x.y.z',
      `${Number(expires) + 1}.${nonce}.${mac}`,
      `${expires}.${nonce.replace(/.$/, nonce.endsWith('0') ? '1' : '0')}.${mac}`,
      `${expires}.${nonce}.${mac.toUpperCase()}`,
      `${token}.extra`,
    ])
      expect(await verifySession(keys, bad), String(bad)).toBeUndefined()
  })

  test('without a secret the key is random per process: sessions of another process do not pass', async () => {
    const a = await sessionKeys([])
    const b = await sessionKeys([])
    expect(await verifySession(a, await newSession(a))).toBeDefined()
    expect(await verifySession(b, await newSession(a))).toBeUndefined()
  })

  test('a CSRF token is bound to its session', async () => {
    const keys = await sessionKeys([SECRET])
    const one = await newSession(keys)
    const two = await newSession(keys)
    const token = await csrfToken(keys.current, one)
    expect(await verifyCsrf(keys.current, one, token)).toBe(true)
    expect(await verifyCsrf(keys.current, two, token)).toBe(false)
    for (const bad of [undefined, '', 42, token.toUpperCase(), `${token}0`])
      expect(await verifyCsrf(keys.current, one, bad)).toBe(false)
  })

  test('the pasted secret must be one of the app secrets exactly', async () => {
    expect(await secretMatches([SECRET, NEXT], SECRET)).toBe(true)
    expect(await secretMatches([SECRET, NEXT], NEXT)).toBe(true)
    for (const wrong of ['', SECRET.slice(0, -1), `${SECRET} `, SECRET.toUpperCase()])
      expect(await secretMatches([SECRET, NEXT], wrong)).toBe(false)
    expect(await secretMatches([], '')).toBe(false)
  })

  test('redirects stay inside the dashboard', () => {
    const base = '/dashboard'
    expect(sameDashboard(base, '/dashboard/jobs?queue=a')).toBe('/dashboard/jobs?queue=a')
    expect(sameDashboard(base, '/dashboard?x=1')).toBe('/dashboard?x=1')
    for (const bad of [
      '//evil.example',
      'https://evil.example/dashboard',
      '/dashboardevil',
      '/dashboard/\\evil',
      '/other',
      42,
      '/dashboard/a b',
      // Dot segments a browser resolves out of the dashboard, plain or percent-encoded.
      '/dashboard/../../x',
      '/dashboard/%2e%2e/%2e%2e/x',
      '/dashboard/.%2E/x',
      '/dashboard/jobs/../../x?y=1',
    ])
      expect(sameDashboard(base, bad), String(bad)).toBe(base)
    // A dot segment that stays inside is resolved as the browser would.
    expect(sameDashboard(base, '/dashboard/a/../jobs?q=1')).toBe('/dashboard/jobs?q=1')
  })
})

describe('the log-in throttle and ended sessions, as rows', () => {
  let t: TestSluice
  let schema: string
  beforeAll(async () => {
    t = await makeSluice({ jobs: [] })
    schema = quoteSchema(t.sluice.config.schema)
  })
  afterAll(() => t.cleanup())

  const throttle = { freeAttempts: 2, baseDelayMs: 1000, maxDelayMs: 5000 }
  const take = async (client: string) =>
    (await t.sluice.db())
      .query<LoginGateRow>(takeLoginAttempt(schema, client, throttle))
      .then((r) => r.rows[0]!)
  /** Lets the client's delay run out without waiting: its row's time moved back. */
  const elapse = (client: string) =>
    t.sql(
      `UPDATE $schema.login_attempts SET blocked_until = now() - interval '1 ms' WHERE client = '${client}'`,
    )
  const row = async (client: string) =>
    (
      await t.sql<{ attempts: number; wait: number }>(
        `SELECT attempts, round(extract(epoch FROM blocked_until - last_attempt_at) * 1000)::float8 AS wait
       FROM $schema.login_attempts WHERE client = '${client}'`,
      )
    )[0]

  test('free attempts, then delays doubling up to the cap; an early attempt is refused and changes nothing', async () => {
    const waits: number[] = []
    for (let i = 1; i <= 8; i++) {
      expect((await take('c1')).admitted, `attempt ${i}`).toBe(true)
      const wait = (await row('c1'))!.wait
      waits.push(wait)
      if (wait > 0) {
        const early = await take('c1')
        expect(early.admitted).toBe(false)
        expect(early.waitMs).toBeGreaterThan(0)
        expect(early.waitMs).toBeLessThanOrEqual(throttle.maxDelayMs)
        expect((await row('c1'))!.attempts).toBe(i)
        await elapse('c1')
      }
    }
    // Two free attempts: the third waits 1 s after the second.
    expect(waits.slice(0, 8)).toEqual([0, 1000, 2000, 4000, 5000, 5000, 5000, 5000])
  })

  test('the right secret forgets the client; other clients have their own rows', async () => {
    for (let i = 0; i < 2; i++) await take('c2')
    expect((await take('c2')).admitted).toBe(false)
    expect((await take('c3')).admitted).toBe(true)
    await (await t.sluice.db()).query(loginSucceeded(schema, 'c2'))
    expect(await row('c2')).toBeUndefined()
  })

  test('concurrent attempts of one client are serialised: past the free ones, one at a time goes ahead', async () => {
    await take('c4')
    const results = await Promise.all(Array.from({ length: 8 }, () => take('c4')))
    expect(results.filter((r) => r.admitted)).toHaveLength(1)
  })

  test('an ended session is recorded until its expiry; expired ones are deleted by later logouts', async () => {
    const db = await t.sluice.db()
    await db.query(endSession(schema, 'a'.repeat(32), new Date(Date.now() - 1000)))
    expect((await db.query<{ ended: boolean }>(sessionEnded(schema, 'a'.repeat(32)))).rows[0]!.ended).toBe(
      true,
    )
    await db.query(endSession(schema, 'b'.repeat(32), new Date(Date.now() + 60_000)))
    expect((await db.query<{ ended: boolean }>(sessionEnded(schema, 'a'.repeat(32)))).rows[0]!.ended).toBe(
      false,
    )
    expect((await db.query<{ ended: boolean }>(sessionEnded(schema, 'b'.repeat(32)))).rows[0]!.ended).toBe(
      true,
    )
  })

  test('a session token names its id and expiry', async () => {
    const keys = await sessionKeys([SECRET])
    const now = Date.now()
    const token = await newSession(keys, now)
    expect(sessionId(token)).toEqual({ id: token.split('.')[1], expiresAt: new Date(now + SESSION_TTL_MS) })
    expect(sessionId('nonsense')).toBeUndefined()
  })
})
