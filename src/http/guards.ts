import type { Context } from 'hono'
import * as z from 'zod/mini'
import { ConfigError, toIssues } from '../errors.js'
import { ONCE } from '../validate.js'
import {
  type AuthMiddleware,
  allowAll,
  anyAuth,
  bearerAuth,
  cronAuth,
  denyAll,
  middleware,
  type SignatureVerifier,
  secretSchema,
  signatureVerifier,
} from './auth.js'

export interface AppAuthOptions {
  /**
   * Bearer tokens, also used as signing secrets: up to two, the current one and the next
   * while rotating. Default: `SLUICE_SECRET` (two may be given comma-separated).
   */
  secrets?: string[]
  /** Accepted as a bearer token on /maintain only. Default: `CRON_SECRET`. */
  cronSecret?: string
  /** Signature timestamp window, either way, ms. Default 5 minutes. */
  toleranceMs?: number
  /**
   * Also accept legacy `v1=` signatures (timestamp and body only, not bound to the route).
   * Default true through the 0.1 releases; set false once every sender signs `v2=`.
   */
  legacySignatures?: boolean
  /** Serve /health without credentials. Default true. */
  publicHealth?: boolean
  /** Serve /metrics without credentials. Default false (bearer token required). */
  publicMetrics?: boolean
}

/** Which credentials each group of routes accepts. */
export interface RouteGuards {
  /**
   * /jobs/*, /events/*, /drain: bearer token, or a signature made for `route` (a pattern
   * such as `/jobs/:name`, its parameters filled in from the request).
   */
  write(route: string): AuthMiddleware
  /** /maintain: bearer token, signature for `/maintain` or the cron secret. */
  maintain: AuthMiddleware
  metrics: AuthMiddleware
  health: AuthMiddleware
  /** The admin API (/api/v1/*) and /openapi.json: bearer token. */
  admin: AuthMiddleware
}

export type Env = Record<string, string | undefined>

// Secrets and the window are checked by the middleware factories; this catches the rest
// (a `publicMetrics: 'false'` must not open /metrics).
const appAuthSchema = z.lazy(() =>
  z.strictObject({
    secrets: z.optional(z.array(z.string())),
    cronSecret: z.optional(z.string()),
    toleranceMs: z.optional(z.number()),
    legacySignatures: z.optional(z.boolean()),
    publicHealth: z.optional(z.boolean()),
    publicMetrics: z.optional(z.boolean()),
  }),
)

export function defaultEnv(): Env {
  return typeof process !== 'undefined' && process.env ? process.env : {}
}

function secretsFromEnv(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/** The path a request for `route` is signed with: `/jobs/:name` → `/jobs/send-email`. */
export function signedPath(route: string, c: Context): string {
  return route.replace(/:([A-Za-z]+)/g, (_, param: string) => c.req.param(param) ?? '')
}

const signedFor = (verify: SignatureVerifier, route: string): AuthMiddleware =>
  middleware((c) => verify(c, signedPath(route, c)))

/**
 * Builds the route guards. The options are checked now; the secrets (options or environment)
 * at the first request that needs them, so that creating an app needs no environment (a
 * framework's build has none). Fails closed: with no secret at all that request fails with a
 * ConfigError naming SLUICE_SECRET, and only an explicit `auth: false` serves routes unauthenticated.
 */
export function routeGuards(auth: AppAuthOptions | false, env: Env, maxBodyBytes: number): RouteGuards {
  if (auth === false)
    return { write: () => allowAll, maintain: allowAll, metrics: allowAll, health: allowAll, admin: allowAll }
  // No options, nothing to check: the schema is not built (see validate.ts).
  const empty = typeof auth === 'object' && auth !== null && Object.keys(auth).length === 0
  const checked = empty ? { success: true as const } : appAuthSchema.safeParse(auth, ONCE)
  if (!checked.success) {
    const first = checked.error.issues[0]
    throw new ConfigError(
      `Invalid createApp auth options: ${first?.path.join('.') || '(root)'} ${first?.message}`,
      toIssues(checked.error.issues),
    )
  }
  let resolved: RouteGuards | undefined
  const guards = (): RouteGuards => {
    resolved ??= resolveGuards(auth, env, maxBodyBytes)
    return resolved
  }
  const lazy = (pick: (g: RouteGuards) => AuthMiddleware): AuthMiddleware => {
    let picked: AuthMiddleware | undefined
    return middleware((c) => {
      picked ??= pick(guards())
      return picked.check(c)
    })
  }
  return {
    write: (route) => lazy((g) => g.write(route)),
    maintain: lazy((g) => g.maintain),
    metrics: auth.publicMetrics ? allowAll : lazy((g) => g.metrics),
    health: auth.publicHealth === false ? lazy((g) => g.health) : allowAll,
    admin: lazy((g) => g.admin),
  }
}

/**
 * Checks the secrets by the rules of the middleware factories, naming where they came from
 * (`SLUICE_SECRET`, not the factory's `tokens.0`) and never echoing a secret.
 */
function checkSecrets(secrets: readonly string[], source: string): void {
  if (secrets.length > 2)
    throw new ConfigError(
      `${source} takes at most two secrets (the current one and the next), not ${secrets.length}.`,
    )
  if (new Set(secrets).size !== secrets.length)
    throw new ConfigError(`${source} lists the same secret twice.`)
  secrets.forEach((secret, i) => {
    const parsed = secretSchema.safeParse(secret)
    if (!parsed.success)
      throw new ConfigError(
        `${source}${secrets.length > 1 ? ` (secret ${i + 1})` : ''} ${parsed.error.issues[0]?.message}.`,
        [{ path: [source], message: parsed.error.issues[0]?.message ?? 'invalid' }],
      )
  })
}

function resolveGuards(auth: AppAuthOptions, env: Env, maxBodyBytes: number): RouteGuards {
  const secrets = auth.secrets ?? secretsFromEnv(env.SLUICE_SECRET)
  const cronSecret = auth.cronSecret ?? (env.CRON_SECRET?.trim() || undefined)
  checkSecrets(secrets, auth.secrets ? 'auth.secrets' : 'SLUICE_SECRET')
  if (cronSecret !== undefined)
    checkSecrets([cronSecret], auth.cronSecret ? 'auth.cronSecret' : 'CRON_SECRET')
  if (secrets.length === 0 && cronSecret === undefined) {
    throw new ConfigError(
      'The HTTP app has no secret: set SLUICE_SECRET (and CRON_SECRET for Vercel cron), or pass ' +
        '`auth: { secrets }`. Pass `auth: false` only to serve it unauthenticated in local development.',
    )
  }
  const bearer = secrets.length > 0 ? bearerAuth({ tokens: secrets }) : denyAll
  const verify =
    secrets.length > 0
      ? signatureVerifier({
          secrets,
          maxBodyBytes,
          ...(auth.toleranceMs === undefined ? {} : { toleranceMs: auth.toleranceMs }),
          ...(auth.legacySignatures === undefined ? {} : { legacySignatures: auth.legacySignatures }),
        })
      : undefined
  const signature = (route: string): AuthMiddleware => (verify ? signedFor(verify, route) : denyAll)
  const cron = cronSecret === undefined ? denyAll : cronAuth({ secret: cronSecret })
  return {
    write: (route) => anyAuth(bearer, signature(route)),
    maintain: anyAuth(bearer, signature('/maintain'), cron),
    metrics: auth.publicMetrics ? allowAll : bearer,
    health: auth.publicHealth === false ? bearer : allowAll,
    admin: bearer,
  }
}
