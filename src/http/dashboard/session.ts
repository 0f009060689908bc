/**
 * The dashboard's session cookie and CSRF tokens, on Web Crypto alone (this runs on edge
 * runtimes too). A session is `<expires ms>.<nonce>.<HMAC>`; its CSRF token is an HMAC of the
 * session under the same key, so a form carries proof that it was rendered for this session
 * and a page on another site, which cannot read our pages, cannot forge one.
 */
import { hmac, hmacKey, timingSafeEqual, toHex, utf8 } from '../../crypto/bytes.js'

export const SESSION_COOKIE = 'sluice_session'
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000

export interface SessionKeys {
  /** Signs new sessions. */
  current: CryptoKey
  /** Every key a session may have been signed with (current first), for secret rotation. */
  all: CryptoKey[]
}

/**
 * Keys derived from the app secrets (a session survives restarts and is valid on every
 * instance), or a random key of this process when there is no secret (`auth: false`).
 */
export async function sessionKeys(secrets: readonly string[]): Promise<SessionKeys> {
  const material =
    secrets.length > 0
      ? await Promise.all(
          secrets.map(async (secret) => hmac(await hmacKey(secret), utf8('sluice-dashboard-session-v1'))),
        )
      : [crypto.getRandomValues(new Uint8Array(32))]
  const all = await Promise.all(material.map((bytes) => hmacKey(new Uint8Array(bytes))))
  return { current: all[0]!, all }
}

const sign = async (key: CryptoKey, text: string): Promise<string> => toHex(await hmac(key, utf8(text)))

function sameText(a: string, b: string): boolean {
  return timingSafeEqual(utf8(a), utf8(b))
}

/** A new session token, valid for SESSION_TTL_MS from `now`. */
export async function newSession(keys: SessionKeys, now = Date.now()): Promise<string> {
  const nonce = toHex(crypto.getRandomValues(new Uint8Array(16)))
  const body = `${now + SESSION_TTL_MS}.${nonce}`
  return `${body}.${await sign(keys.current, body)}`
}

/** A session token's nonce (its id, which a logout ends) and expiry; undefined for a malformed one. */
export function sessionId(token: string): { id: string; expiresAt: Date } | undefined {
  const match = /^([0-9]{1,15})\.([0-9a-f]{32})\./.exec(token)
  return match ? { id: match[2]!, expiresAt: new Date(Number(match[1])) } : undefined
}

/** The key that signed `token` when it is a valid, unexpired session; undefined otherwise. */
export async function verifySession(
  keys: SessionKeys,
  token: string | undefined,
  now = Date.now(),
): Promise<CryptoKey | undefined> {
  const match = token === undefined ? null : /^([0-9]{1,15})\.([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(token)
  if (!match) return undefined
  if (Number(match[1]) <= now) return undefined
  const body = `${match[1]}.${match[2]}`
  for (const key of keys.all) if (sameText(await sign(key, body), match[3]!)) return key
  return undefined
}

/** The CSRF token of a session: an HMAC of the session under its key. */
export function csrfToken(key: CryptoKey, session: string): Promise<string> {
  return sign(key, `csrf.${session}`)
}

export async function verifyCsrf(key: CryptoKey, session: string, presented: unknown): Promise<boolean> {
  if (typeof presented !== 'string' || !/^[0-9a-f]{64}$/.test(presented)) return false
  return sameText(await csrfToken(key, session), presented)
}

/**
 * Compares a pasted secret with the app's through HMACs under a random key: equal-length
 * digests, so neither the secret's content nor its length leaks through timing.
 */
export async function secretMatches(secrets: readonly string[], presented: string): Promise<boolean> {
  const key = await hmacKey(crypto.getRandomValues(new Uint8Array(32)))
  const digest = await hmac(key, utf8(presented))
  let ok = false
  for (const secret of secrets) ok = timingSafeEqual(await hmac(key, utf8(secret)), digest) || ok
  return ok
}
