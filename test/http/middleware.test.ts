import { Hono } from 'hono'
import { describe, expect, test } from 'vitest'
import { bearerAuth, ConfigError, cronAuth, sign, signatureAuth } from '../../src/index.js'

const SECRET = 'sk_current_2f6b1c8e9a0d4e7f'
const NEXT_SECRET = 'sk_next_7c1d9e2a4b6f8031a5'
const CRON_SECRET = 'cron_5e8a1f0c7b2d9e4a6c3b'
const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` })

describe('middleware factories on their own', () => {
  test('validate their options up front', () => {
    expect(() => bearerAuth({ tokens: [] })).toThrow(ConfigError)
    expect(() => bearerAuth({ tokens: [''] })).toThrow(ConfigError)
    expect(() => bearerAuth({ tokens: ['with a space in it 123'] })).toThrow(ConfigError)
    expect(() => bearerAuth({ tokens: [SECRET, NEXT_SECRET, `${SECRET}2`] })).toThrow(ConfigError)
    expect(() => cronAuth({ secret: 'short' })).toThrow(ConfigError)
    expect(() => signatureAuth({ secrets: [] })).toThrow(ConfigError)
    expect(() => signatureAuth({ secrets: [SECRET], toleranceMs: 0 })).toThrow(ConfigError)
  })

  test('answer 401 JSON in a plain Hono app, and leave the body readable', async () => {
    const plain = new Hono()
    plain.post('/hook', signatureAuth({ secrets: [SECRET] }), async (c) => c.json(await c.req.json()))
    plain.get('/cron', cronAuth({ secret: CRON_SECRET }), (c) => c.text('ran'))

    const payload = JSON.stringify({ hello: 'world' })
    const ok = await plain.request('/hook', {
      method: 'POST',
      body: payload,
      headers: await sign(SECRET, { method: 'POST', path: '/hook', body: payload }),
    })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ hello: 'world' })

    const denied = await plain.request('/hook', { method: 'POST', body: payload })
    expect(denied.status).toBe(401)
    expect(await denied.json()).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'Missing or invalid credentials.' },
    })

    expect((await plain.request('/cron', { headers: bearer(CRON_SECRET) })).status).toBe(200)
    expect((await plain.request('/cron', { headers: bearer(SECRET) })).status).toBe(401)
  })

  test('sign() produces v2 hex of HMAC-SHA256 over "<timestamp>\\n<METHOD>\\n<path>\\n<body>"', async () => {
    const headers = await sign(
      'key_for_a_known_vector',
      { method: 'post', path: '/drain', body: 'body' },
      1_700_000_000_000,
    )
    expect(headers['Sluice-Timestamp']).toBe('1700000000000')
    const key = await crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode('key_for_a_known_vector'),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    )
    const mac = new Uint8Array(
      await crypto.subtle.sign('HMAC', key, new TextEncoder().encode('1700000000000\nPOST\n/drain\nbody')),
    )
    const hex = [...mac].map((b) => b.toString(16).padStart(2, '0')).join('')
    expect(headers['Sluice-Signature']).toBe(`v2=${hex}`)
    const request = { method: 'POST', path: '/drain' }
    await expect(sign(SECRET, request, -1)).rejects.toThrow(TypeError)
    await expect(sign(SECRET, { ...request, path: 'drain' })).rejects.toThrow(TypeError)
    await expect(sign(SECRET, { ...request, path: '/drain\nPOST' })).rejects.toThrow(TypeError)
    await expect(sign(SECRET, { ...request, method: 'PO ST' })).rejects.toThrow(TypeError)
    // The old call shape, sign(secret, body), is refused rather than signing something else.
    await expect(sign(SECRET, 'body' as never)).rejects.toThrow(TypeError)
  })

  test('signatureAuth checks the path it is told senders sign', async () => {
    const plain = new Hono()
    plain.post('/api/v1/hook', signatureAuth({ secrets: [SECRET], path: '/hook' }), (c) => c.text('ok'))
    const send = async (path: string) =>
      plain.request('/api/v1/hook', {
        method: 'POST',
        body: '{}',
        headers: await sign(SECRET, { method: 'POST', path, body: '{}' }),
      })
    expect((await send('/hook')).status).toBe(200)
    expect((await send('/api/v1/hook')).status).toBe(401)
  })
})
