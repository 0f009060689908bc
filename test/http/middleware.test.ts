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
      headers: await sign(SECRET, payload),
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

  test('sign() produces v1 hex of HMAC-SHA256 over "<timestamp>.<body>"', async () => {
    const headers = await sign('key_for_a_known_vector', 'body', 1_700_000_000_000)
    expect(headers['Sluice-Timestamp']).toBe('1700000000000')
    const key = await crypto.subtle.importKey(
      'raw',
      new TextEncoder().encode('key_for_a_known_vector'),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    )
    const mac = new Uint8Array(
      await crypto.subtle.sign('HMAC', key, new TextEncoder().encode('1700000000000.body')),
    )
    const hex = [...mac].map((b) => b.toString(16).padStart(2, '0')).join('')
    expect(headers['Sluice-Signature']).toBe(`v1=${hex}`)
    await expect(sign(SECRET, 'x', -1)).rejects.toThrow(TypeError)
  })
})
