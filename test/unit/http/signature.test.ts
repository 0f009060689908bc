import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { fromHex, hmacKey, timingSafeEqual, toHex, utf8 } from '../../../src/crypto/bytes.js'
import {
  matchesAny,
  parseSignature,
  SIGNATURE_HEADER,
  sign,
  TIMESTAMP_HEADER,
} from '../../../src/http/signature.js'

const SECRET = 'a-secret-of-sixteen-or-more'
const hex = (text: string, secret = SECRET): string => createHmac('sha256', secret).update(text).digest('hex')
const request = { method: 'POST', path: '/drain', body: '{"queues":["a"]}' }

describe('sign', () => {
  it('signs "<timestamp>\\n<METHOD>\\n<path>\\n<body>" with HMAC-SHA256 as v2', async () => {
    const headers = await sign(SECRET, { ...request, method: 'post' }, 1_700_000_000_000)
    expect(headers).toEqual({
      [TIMESTAMP_HEADER]: '1700000000000',
      [SIGNATURE_HEADER]: `v2=${hex('1700000000000\nPOST\n/drain\n{"queues":["a"]}')}`,
    })
  })

  it('signs bytes as given and an absent body as empty', async () => {
    const bytes = new Uint8Array([0xff, 0x00, 0x41])
    const withBytes = await sign(SECRET, { method: 'PUT', path: '/x', body: bytes }, 5)
    const expected = createHmac('sha256', SECRET)
      .update(Buffer.concat([Buffer.from('5\nPUT\n/x\n'), Buffer.from(bytes)]))
      .digest('hex')
    expect(withBytes[SIGNATURE_HEADER]).toBe(`v2=${expected}`)
    const empty = await sign(SECRET, { method: 'GET', path: '/maintain' }, 5)
    expect(empty[SIGNATURE_HEADER]).toBe(`v2=${hex('5\nGET\n/maintain\n')}`)
  })

  it('refuses a timestamp, method or path that cannot be signed unambiguously', async () => {
    await expect(sign(SECRET, request, -1)).rejects.toThrow(TypeError)
    await expect(sign(SECRET, request, 1.5)).rejects.toThrow(/non-negative integer/)
    await expect(sign(SECRET, { ...request, method: 'PO ST' })).rejects.toThrow(/Invalid method/)
    await expect(sign(SECRET, { ...request, path: 'drain' })).rejects.toThrow(/start with "\/"/)
    await expect(sign(SECRET, { ...request, path: '/a\nGET' })).rejects.toThrow(/control characters/)
    await expect(sign(SECRET, { ...request, path: '/a b' })).rejects.toThrow(/spaces/)
    await expect(sign(SECRET, null as never)).rejects.toThrow(/takes the request/)
  })
})

describe('parseSignature', () => {
  const mac = 'ab'.repeat(32)

  it('reads v2 and the legacy v1, keeping the stamp as sent and a lowercase replay key', () => {
    expect(parseSignature('0012', `v2=${mac.toUpperCase()}`)).toMatchObject({
      version: 2,
      stamp: '0012',
      timestamp: 12,
      key: `v2=${mac}`,
    })
    const v1 = parseSignature('12', ` v1=${mac} `)
    expect(v1?.version).toBe(1)
    expect(toHex(v1?.mac ?? new Uint8Array())).toBe(mac)
  })

  it.each([
    ['no timestamp', undefined, `v2=${mac}`],
    ['no signature', '12', undefined],
    ['an empty timestamp', '', `v2=${mac}`],
    ['a signed timestamp', '-12', `v2=${mac}`],
    ['a fractional timestamp', '1.5', `v2=${mac}`],
    ['a 17-digit timestamp', '1'.repeat(17), `v2=${mac}`],
    ['an unknown version', '12', `v3=${mac}`],
    ['no version', '12', mac],
    ['a short mac', '12', `v2=${mac.slice(2)}`],
    ['a long mac', '12', `v2=${mac}00`],
    ['a mac that is not hex', '12', `v2=${'zz'.repeat(32)}`],
    ['two signatures', '12', `v2=${mac},v2=${mac}`],
  ])('refuses %s', (_, timestamp, signature) => {
    expect(parseSignature(timestamp, signature)).toBeUndefined()
  })
})

describe('matchesAny', () => {
  const body = utf8(request.body)

  it('accepts what sign() produced, under any of the keys', async () => {
    const headers = await sign(SECRET, request, 42)
    const parsed = parseSignature(headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER])
    if (!parsed) throw new Error('unparsed')
    const keys = [await hmacKey('another-secret-entirely'), await hmacKey(SECRET)]
    expect(await matchesAny(keys, parsed, { method: 'POST', path: '/drain', body })).toBe(true)
    expect(await matchesAny(keys.slice(0, 1), parsed, { method: 'POST', path: '/drain', body })).toBe(false)
  })

  it('binds v2 to method, path, body and timestamp', async () => {
    const headers = await sign(SECRET, request, 42)
    const keys = [await hmacKey(SECRET)]
    const parsed = parseSignature(headers[TIMESTAMP_HEADER], headers[SIGNATURE_HEADER])
    if (!parsed) throw new Error('unparsed')
    expect(await matchesAny(keys, parsed, { method: 'post', path: '/drain', body })).toBe(true)
    expect(await matchesAny(keys, parsed, { method: 'PUT', path: '/drain', body })).toBe(false)
    expect(await matchesAny(keys, parsed, { method: 'POST', path: '/maintain', body })).toBe(false)
    expect(await matchesAny(keys, parsed, { method: 'POST', path: '/drain', body: utf8('{}') })).toBe(false)
    const moved = parseSignature('43', headers[SIGNATURE_HEADER])
    if (!moved) throw new Error('unparsed')
    expect(await matchesAny(keys, moved, { method: 'POST', path: '/drain', body })).toBe(false)
  })

  it('checks a legacy v1 signature over "<timestamp>.<body>" only', async () => {
    const parsed = parseSignature('42', `v1=${hex(`42.${request.body}`)}`)
    if (!parsed) throw new Error('unparsed')
    const keys = [await hmacKey(SECRET)]
    expect(await matchesAny(keys, parsed, { method: 'GET', path: '/anything', body })).toBe(true)
    expect(await matchesAny(keys, parsed, { method: 'GET', path: '/anything', body: utf8('x') })).toBe(false)
  })

  it('never accepts a v2 mac presented as v1 or the other way round', async () => {
    const v2 = hex(`42\nPOST\n/drain\n${request.body}`)
    const keys = [await hmacKey(SECRET)]
    const asV1 = parseSignature('42', `v1=${v2}`)
    if (!asV1) throw new Error('unparsed')
    expect(await matchesAny(keys, asV1, { method: 'POST', path: '/drain', body })).toBe(false)
  })
})

describe('hex and comparison helpers', () => {
  it('round-trips hex in either case and refuses odd or non-hex text', () => {
    expect(toHex(new Uint8Array([0, 15, 255]))).toBe('000fff')
    expect(fromHex('000FfF')).toEqual(new Uint8Array([0, 15, 255]))
    expect(fromHex('')).toEqual(new Uint8Array(0))
    expect(fromHex('abc')).toBeUndefined()
    expect(fromHex('0g')).toBeUndefined()
  })

  it('compares byte strings exactly', () => {
    expect(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true)
    expect(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false)
    expect(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 0]))).toBe(false)
  })
})
