import type { Context, MiddlewareHandler } from 'hono'
import * as z from 'zod/mini'
import { callable } from '../callable.js'
import { hmac, hmacKey, timingSafeEqual, utf8 } from '../crypto/bytes.js'
import { matchesAny, parseSignature, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../crypto/signature.js'
import { ConfigError, toIssues } from '../errors.js'
import { ONCE } from '../validate.js'
import { DEFAULT_MAX_BODY_BYTES, readBody } from './body.js'
import { unauthorized } from './errors.js'
import { ReplayGuard } from './replay.js'

/** Answers whether a request carries valid credentials. Never throws for bad credentials. */
export type AuthCheck = (c: Context) => Promise<boolean>

/** Hono middleware that answers 401 `UNAUTHORIZED` unless `check` passes; composable with anyAuth. */
export type AuthMiddleware = MiddlewareHandler & { readonly check: AuthCheck }

/** Secrets and tokens: 16 to 1,024 visible ASCII characters (they travel in headers and env vars). */
export const secretSchema = z.lazy(() =>
  z.string().check(
    z.minLength(16, 'must be at least 16 characters'),
    z.maxLength(1024, {
      error: (issue) => `is ${String(issue.input).length.toLocaleString('en-US')} characters; at most 1,024`,
    }),
    z.regex(/^[\x21-\x7e]+$/, 'must be visible ASCII characters, no spaces'),
  ),
)

const rotatingSecrets = z.lazy(() =>
  z.array(secretSchema).check(
    z.minLength(1, 'needs at least one'),
    z.maxLength(2, 'takes at most two (the current one and the next, while rotating)'),
    z.refine((list) => new Set(list).size === list.length, 'must not repeat'),
  ),
)

const bearerSchema = z.lazy(() => z.strictObject({ tokens: rotatingSecrets }))
const cronSchema = z.lazy(() => z.strictObject({ secret: secretSchema }))
const signatureSchema = z.lazy(() =>
  z.strictObject({
    secrets: rotatingSecrets,
    toleranceMs: z.optional(z.int().check(z.minimum(1_000), z.maximum(3_600_000))),
    maxBodyBytes: z.optional(z.int().check(z.minimum(0), z.maximum(64 * 1024 * 1024))),
    replayCapacity: z.optional(z.int().check(z.minimum(1), z.maximum(1_000_000))),
    path: z.optional(
      z.union([
        z.string().check(z.regex(/^\/[\x21-\x7e]*$/, 'must be a path such as /hooks/drain')),
        callable(),
      ]),
    ),
    legacySignatures: z.optional(z.boolean()),
  }),
)

export type BearerAuthOptions = z.input<typeof bearerSchema>
export type CronAuthOptions = z.input<typeof cronSchema>
export interface SignatureAuthOptions {
  /** HMAC secrets, up to two while rotating. */
  secrets: string[]
  /** How far the sender's timestamp may be from ours, either way, ms. Default 5 minutes. */
  toleranceMs?: number
  /** Largest body read to verify a signature. Default 1 MiB (createApp passes its own limit). */
  maxBodyBytes?: number
  /** Most signatures remembered for replay protection. Default 10,000. */
  replayCapacity?: number
  /** The path senders sign. Default the request's URL path. */
  path?: string | ((c: Context) => string)
  /**
   * Also accept `v1=` signatures, which cover only the timestamp and the body (so one made
   * for one route passes at any other). Default true through the 0.1 releases, for senders
   * not yet updated; set false once every sender signs `v2=`.
   */
  legacySignatures?: boolean
}

function validate<T>(factory: string, schema: z.ZodMiniType<T>, options: unknown): T {
  const parsed = schema.safeParse(options, ONCE)
  if (parsed.success) return parsed.data
  const first = parsed.error.issues[0]
  throw new ConfigError(
    `Invalid ${factory} options: ${first?.path.join('.') || '(root)'} ${first?.message}`,
    toIssues(parsed.error.issues),
  )
}

/** Middleware that answers 401 unless `check` passes. */
export function middleware(check: AuthCheck): AuthMiddleware {
  const handler: MiddlewareHandler = async (c, next) => {
    if (!(await check(c))) throw unauthorized()
    await next()
  }
  return Object.assign(handler, { check })
}

/** Passes when any of `auths` accepts the request (tried in order). */
export function anyAuth(...auths: AuthMiddleware[]): AuthMiddleware {
  return middleware(async (c) => {
    for (const auth of auths) if (await auth.check(c)) return true
    return false
  })
}

/** Rejects every request: stands in for a scheme that has no secret configured. */
export const denyAll: AuthMiddleware = middleware(async () => false)

/** Lets every request through. */
export const allowAll: AuthMiddleware = middleware(async () => true)

export function bearerToken(c: Context): string | undefined {
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(c.req.header('authorization') ?? '')
  return match?.[1]
}

/**
 * Compares a presented token with the expected ones through an HMAC under a random
 * per-instance key: digests have one length whatever the token, so neither the
 * content nor the length of a secret leaks through timing.
 */
function tokenCheck(tokens: readonly string[]): AuthCheck {
  let prepared: Promise<{ key: CryptoKey; digests: Uint8Array[] }> | undefined
  const prepare = async (): Promise<{ key: CryptoKey; digests: Uint8Array[] }> => {
    const key = await hmacKey(crypto.getRandomValues(new Uint8Array(32)))
    return { key, digests: await Promise.all(tokens.map((token) => hmac(key, utf8(token)))) }
  }
  return async (c) => {
    const presented = bearerToken(c)
    if (presented === undefined) return false
    prepared ??= prepare()
    const { key, digests } = await prepared
    const digest = await hmac(key, utf8(presented))
    let ok = false
    for (const expected of digests) ok = timingSafeEqual(expected, digest) || ok
    return ok
  }
}

/** `Authorization: Bearer <token>`, any of up to two tokens (current and next, while rotating). */
export function bearerAuth(options: BearerAuthOptions): AuthMiddleware {
  const { tokens } = validate('bearerAuth', bearerSchema, options)
  return middleware(tokenCheck(tokens))
}

/** Vercel's cron convention: `Authorization: Bearer $CRON_SECRET`. */
export function cronAuth(options: CronAuthOptions): AuthMiddleware {
  const { secret } = validate('cronAuth', cronSchema, options)
  return middleware(tokenCheck([secret]))
}

const SHARED = Symbol.for('sluice.signatures')

/**
 * What every signature check in this process shares, on globalThis: a framework that bundles
 * each route apart (Next.js) loads Sluice once per route, and a signature accepted by one
 * route's app (the lean drain) must be a replay to another (the catch-all serving /drain too).
 */
function shared(): { guards: Map<number, ReplayGuard>; warnedLegacy: boolean } {
  const global = globalThis as { [SHARED]?: ReturnType<typeof shared> }
  global[SHARED] ??= { guards: new Map(), warnedLegacy: false }
  return global[SHARED]
}

/** The process's replay memory of this capacity. */
function processGuard(capacity: number): ReplayGuard {
  const { guards } = shared()
  let guard = guards.get(capacity)
  if (!guard) {
    guard = new ReplayGuard(capacity)
    guards.set(capacity, guard)
  }
  return guard
}

/** Checks a request's signature as signed for `path`; records it as used when it passes. */
export type SignatureVerifier = (c: Context, path: string) => Promise<boolean>

/**
 * The check behind signatureAuth, for middleware that sign per route: one key set and one
 * replay memory whatever the route.
 */
export function signatureVerifier(options: SignatureAuthOptions): SignatureVerifier {
  const opts = validate('signatureAuth', signatureSchema, options)
  const toleranceMs = opts.toleranceMs ?? 300_000
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const legacy = opts.legacySignatures ?? true
  const seen = processGuard(opts.replayCapacity ?? 10_000)
  let keys: Promise<CryptoKey[]> | undefined
  return async (c, path) => {
    const parsed = parseSignature(c.req.header(TIMESTAMP_HEADER), c.req.header(SIGNATURE_HEADER))
    if (!parsed || Math.abs(Date.now() - parsed.timestamp) > toleranceMs) return false
    if (parsed.version === 1 && !legacy) return false
    const body = await readBody(c, maxBodyBytes)
    keys ??= Promise.all(opts.secrets.map((secret) => hmacKey(secret)))
    if (!(await matchesAny(await keys, parsed, { method: c.req.method, path, body }))) return false
    if (!seen.use(parsed.key, parsed.timestamp + toleranceMs, Date.now())) return false
    if (parsed.version === 1 && !shared().warnedLegacy) {
      shared().warnedLegacy = true
      console.warn(
        '[sluice] Accepted a legacy v1 signature (not bound to method and path). Update the sender, ' +
          'then refuse them with `legacySignatures: false`.',
      )
    }
    return true
  }
}

/**
 * `Sluice-Timestamp` (unix ms) and `Sluice-Signature: v2=<hex HMAC-SHA256 of
 * "<timestamp>\n<METHOD>\n<path>\n<raw body>">` (see sign()). The timestamp must be within
 * `toleranceMs` of this instance's clock, either way, and a signature is accepted once:
 * this process remembers those it accepted until they leave the window, whichever app or
 * route accepted them. Other instances do not share that memory, so across instances replay
 * protection is the window alone (see ReplayGuard).
 */
export function signatureAuth(options: SignatureAuthOptions): AuthMiddleware {
  const verify = signatureVerifier(options)
  const path = options.path
  return middleware((c) => verify(c, typeof path === 'function' ? path(c) : (path ?? c.req.path)))
}
