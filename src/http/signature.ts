import { concat, fromHex, hmac, hmacKey, timingSafeEqual, toHex, utf8 } from './crypto.js'

/** Header carrying the sender's clock, unix milliseconds. */
export const TIMESTAMP_HEADER = 'Sluice-Timestamp'
/** Header carrying `v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`. */
export const SIGNATURE_HEADER = 'Sluice-Signature'

/** A type alias, not an interface, so it passes as `HeadersInit` / `Record<string, string>`. */
export type SignedHeaders = {
  'Sluice-Timestamp': string
  'Sluice-Signature': string
}

const bytesOf = (body: string | Uint8Array): Uint8Array => (typeof body === 'string' ? utf8(body) : body)

function signedPayload(timestamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  return concat(utf8(`${timestamp}.`), body)
}

/**
 * The headers that authenticate `body` for signatureAuth. Sign the exact bytes you send,
 * and sign again for every attempt: a signature is accepted once.
 */
export async function sign(
  secret: string,
  body: string | Uint8Array,
  timestamp: number = Date.now(),
): Promise<SignedHeaders> {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new TypeError('timestamp must be a non-negative integer of unix milliseconds')
  const ts = String(timestamp)
  const mac = await hmac(await hmacKey(secret), signedPayload(ts, bytesOf(body)))
  return { 'Sluice-Timestamp': ts, 'Sluice-Signature': `v1=${toHex(mac)}` }
}

export interface ParsedSignature {
  /** The header as sent: it is what was signed. */
  stamp: string
  timestamp: number
  /** As sent, lowercased: the replay key. */
  hex: string
  mac: Uint8Array
}

/** Parses the two headers; undefined when either is missing or malformed. */
export function parseSignature(
  timestamp: string | undefined,
  signature: string | undefined,
): ParsedSignature | undefined {
  if (!timestamp || !signature || !/^\d{1,16}$/.test(timestamp)) return undefined
  const match = /^v1=([0-9a-fA-F]{64})$/.exec(signature.trim())
  const mac = match ? fromHex(match[1]!) : undefined
  if (!match || !mac) return undefined
  return { stamp: timestamp, timestamp: Number(timestamp), hex: match[1]!.toLowerCase(), mac }
}

/** True when `parsed` is the HMAC of `<timestamp>.<body>` under one of `keys`. Every key is tried. */
export async function matchesAny(
  keys: readonly CryptoKey[],
  parsed: ParsedSignature,
  body: Uint8Array,
): Promise<boolean> {
  const payload = signedPayload(parsed.stamp, body)
  const macs = await Promise.all(keys.map((key) => hmac(key, payload)))
  let ok = false
  for (const mac of macs) ok = timingSafeEqual(mac, parsed.mac) || ok
  return ok
}
