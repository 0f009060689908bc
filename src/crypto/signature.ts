import { concat, fromHex, hmac, hmacKey, timingSafeEqual, toHex, utf8 } from './bytes.js'

/** Header carrying the sender's clock, unix milliseconds. */
export const TIMESTAMP_HEADER = 'Sluice-Timestamp'
/** Header carrying `v2=<hex HMAC-SHA256 of "<timestamp>\n<METHOD>\n<path>\n<raw body>">`. */
export const SIGNATURE_HEADER = 'Sluice-Signature'

/** A type alias, not an interface, so it passes as `HeadersInit` / `Record<string, string>`. */
export type SignedHeaders = {
  'Sluice-Timestamp': string
  'Sluice-Signature': string
}

/** What a signature covers besides the timestamp. */
export interface SignedRequest {
  /** `POST`, `GET`…; compared in upper case. */
  method: string
  /**
   * The Sluice route, whatever prefix the deployment serves it under: `/drain`, `/maintain`,
   * `/jobs/<job name>`, `/events/<topic>`. For signatureAuth on a route of your own, its
   * `path` option (default the request's URL path).
   */
  path: string
  /** The exact bytes sent; empty when there is no body. */
  body?: string | Uint8Array
}

const bytesOf = (body: string | Uint8Array | undefined): Uint8Array =>
  body === undefined ? new Uint8Array(0) : typeof body === 'string' ? utf8(body) : body

const METHOD = /^[A-Za-z]{1,16}$/
/** No whitespace or control characters: the fields before the body are newline-separated. */
const PATH = /^\/[\x21-\x7e]{0,2047}$/

function payloadV2(stamp: string, method: string, path: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  return concat(utf8(`${stamp}\n${method.toUpperCase()}\n${path}\n`), body)
}

/** The legacy format: timestamp and body only, so a signature fitted any route and method. */
function payloadV1(stamp: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  return concat(utf8(`${stamp}.`), body)
}

/**
 * The headers that authenticate a request for signatureAuth: an HMAC-SHA256 over the
 * timestamp, the method, the route's path and the exact body bytes. Sign the bytes you
 * send, and sign again for every attempt: a signature is accepted once.
 */
export async function sign(
  secret: string,
  request: SignedRequest,
  timestamp: number = Date.now(),
): Promise<SignedHeaders> {
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new TypeError('timestamp must be a non-negative integer of unix milliseconds')
  if (typeof request !== 'object' || request === null)
    throw new TypeError('sign() takes the request to sign: { method, path, body }')
  if (!METHOD.test(request.method)) throw new TypeError(`Invalid method to sign: ${String(request.method)}`)
  if (!PATH.test(request.path))
    throw new TypeError('The path to sign must start with "/" and hold no spaces or control characters')
  const ts = String(timestamp)
  const mac = await hmac(
    await hmacKey(secret),
    payloadV2(ts, request.method, request.path, bytesOf(request.body)),
  )
  return { 'Sluice-Timestamp': ts, 'Sluice-Signature': `v2=${toHex(mac)}` }
}

export interface ParsedSignature {
  /** 2 binds method, path and body; 1 (legacy) only the body. */
  version: 1 | 2
  /** The header as sent: it is what was signed. */
  stamp: string
  timestamp: number
  /** Version and hex as sent, lowercased: the replay key. */
  key: string
  mac: Uint8Array
}

/** Parses the two headers; undefined when either is missing or malformed. */
export function parseSignature(
  timestamp: string | undefined,
  signature: string | undefined,
): ParsedSignature | undefined {
  if (!timestamp || !signature || !/^\d{1,16}$/.test(timestamp)) return undefined
  const match = /^v([12])=([0-9a-fA-F]{64})$/.exec(signature.trim())
  const mac = match ? fromHex(match[2]!) : undefined
  if (!match || !mac) return undefined
  return {
    version: match[1] === '1' ? 1 : 2,
    stamp: timestamp,
    timestamp: Number(timestamp),
    key: `v${match[1]}=${match[2]!.toLowerCase()}`,
    mac,
  }
}

/**
 * True when `parsed` is the HMAC of the request under one of `keys` (every key is tried):
 * of `<timestamp>\n<METHOD>\n<path>\n<body>` for v2, of `<timestamp>.<body>` for v1.
 */
export async function matchesAny(
  keys: readonly CryptoKey[],
  parsed: ParsedSignature,
  request: { method: string; path: string; body: Uint8Array },
): Promise<boolean> {
  const payload =
    parsed.version === 2
      ? payloadV2(parsed.stamp, request.method, request.path, request.body)
      : payloadV1(parsed.stamp, request.body)
  const macs = await Promise.all(keys.map((key) => hmac(key, payload)))
  let ok = false
  for (const mac of macs) ok = timingSafeEqual(mac, parsed.mac) || ok
  return ok
}
