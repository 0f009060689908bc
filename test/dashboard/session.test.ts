import { describe, expect, test } from 'vitest'
import { sameDashboard } from '../../src/http/dashboard/security.js'
import {
  csrfToken,
  newSession,
  SESSION_TTL_MS,
  secretMatches,
  sessionKeys,
  verifyCsrf,
  verifySession,
} from '../../src/http/dashboard/session.js'

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
    ])
      expect(sameDashboard(base, bad), String(bad)).toBe(base)
  })
})
