import type { Context } from 'hono'
import * as z from 'zod'
import { ConfigError, toIssues } from '../errors.js'
import {
  type AuthMiddleware,
  allowAll,
  anyAuth,
  bearerAuth,
  cronAuth,
  denyAll,
  middleware,
  type SignatureVerifier,
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
const appAuthSchema = z
  .object({
    secrets: z.array(z.string()).optional(),
    cronSecret: z.string().optional(),
    toleranceMs: z.number().optional(),
    legacySignatures: z.boolean().optional(),
    publicHealth: z.boolean().optional(),
    publicMetrics: z.boolean().optional(),
  })
  .strict()

export function defaultEnv(): Env {
  return typeof process !== 'undefined' && process.env ? process.env : {}
}

function secretsFromEnv(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/**
 * Builds the route guards. Fails closed: with no secret at all (neither option nor
 * environment) it throws, and only an explicit `auth: false` serves routes unauthenticated.
 */
/** The path a request for `route` is signed with: `/jobs/:name` → `/jobs/send-email`. */
export function signedPath(route: string, c: Context): string {
  return route.replace(/:([A-Za-z]+)/g, (_, param: string) => c.req.param(param) ?? '')
}

const signedFor = (verify: SignatureVerifier, route: string): AuthMiddleware =>
  middleware((c) => verify(c, signedPath(route, c)))

export function routeGuards(auth: AppAuthOptions | false, env: Env, maxBodyBytes: number): RouteGuards {
  if (auth === false)
    return { write: () => allowAll, maintain: allowAll, metrics: allowAll, health: allowAll, admin: allowAll }
  const checked = appAuthSchema.safeParse(auth)
  if (!checked.success) {
    const first = checked.error.issues[0]
    throw new ConfigError(
      `Invalid createApp auth options: ${first?.path.join('.') || '(root)'} ${first?.message}`,
      toIssues(checked.error.issues),
    )
  }
  const secrets = auth.secrets ?? secretsFromEnv(env.SLUICE_SECRET)
  const cronSecret = auth.cronSecret ?? (env.CRON_SECRET?.trim() || undefined)
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
