import type { Context } from 'hono'
import * as z from 'zod'
import { callable } from '../../callable.js'
import { ConfigError, toIssues } from '../../errors.js'
import type { LoginThrottle } from '../../sql/dashboard.js'

/** The log-in's default throttle: 5 attempts in a row, then 1 s, 2 s, 4 s… up to 30 s between attempts. */
export const LOGIN_THROTTLE: LoginThrottle = { freeAttempts: 5, baseDelayMs: 1000, maxDelayMs: 30_000 }

export interface DashboardOptions {
  /** Where the dashboard is served in the app. Default `/dashboard`. */
  path?: string
  /**
   * The prefix a host strips from the path before the app sees the request, such as Express's
   * `app.use('/sluice', …)`: the dashboard's links, redirects and cookies carry it. Not needed
   * under Hono's `app.route('/sluice', …)`, where the app sees the whole path. Default none.
   */
  mountedAt?: string
  /** Show everything, change nothing: every action answers 403 and no action button is rendered. */
  readOnly?: boolean
  /**
   * Decides who may see the dashboard (e.g. from the headers an SSO proxy sets), instead of
   * the log-in page that asks for the app secret. A refused request gets 403.
   */
  authorize?: (c: Context) => boolean | Promise<boolean>
  /** Seconds between automatic refreshes until the operator picks another: 0 (off, the default), 2, 5 or 15. */
  defaultRefreshSeconds?: 0 | 2 | 5 | 15
  /**
   * When the database page warns that a transaction holds the xmin horizon back (while the jobs
   * table has dead rows): past `xminAge` transactions (default 10,000) or `heldMs` open (default 60 s).
   */
  horizonWarning?: { xminAge?: number; heldMs?: number }
  /**
   * How long one action over many rows (purge, bulk retry and cancel, dead letters by filter) may
   * keep taking chunks of them before it answers, ms (default 10,000; at least one chunk runs).
   * Keep it under the platform's request timeout.
   */
  actionBudgetMs?: number
  /**
   * How the log-in slows down repeated attempts from one client (see LOGIN_THROTTLE): after
   * `freeAttempts` in a row, each attempt waits `baseDelayMs`, doubling, at most `maxDelayMs`
   * after the previous one. A right secret resets the client's count.
   */
  loginThrottle?: Partial<LoginThrottle>
  /**
   * Who a log-in attempt comes from, for the throttle. Default: the address the platform puts in
   * `CF-Connecting-IP`, `X-Real-IP`, `X-Vercel-Forwarded-For` or the first of `X-Forwarded-For`,
   * else the connection's peer address on Node; without any, one bucket shared by every client.
   */
  clientKey?: (c: Context) => string | undefined
}

export interface ResolvedDashboardOptions {
  path: string
  /** '' when the app sees the whole path. */
  mountedAt: string
  readOnly: boolean
  authorize: DashboardOptions['authorize']
  defaultRefreshSeconds: 0 | 2 | 5 | 15
  horizonWarning: { xminAge?: number; heldMs?: number }
  actionBudgetMs: number
  loginThrottle: LoginThrottle
  clientKey: DashboardOptions['clientKey']
}

const RESERVED = ['/api', '/jobs', '/events', '/drain', '/maintain', '/health', '/metrics', '/openapi.json']

const pathSchema = z.lazy(() =>
  z
    .string()
    .regex(/^(\/[a-z0-9][a-z0-9._-]*)+$/, 'must be a path such as /dashboard (lowercase, no trailing slash)')
    .refine(
      (path) => !RESERVED.some((r) => path === r || path.startsWith(`${r}/`)),
      'must not shadow a route of the API (/api, /jobs, /events, /drain, /maintain, /health, /metrics)',
    ),
)

const objectSchema = z.lazy(() =>
  z
    .object({
      path: pathSchema.optional(),
      mountedAt: z
        .string()
        .regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'must be a path prefix such as /sluice (no trailing slash)')
        .optional(),
      readOnly: z.boolean().optional(),
      authorize: z.optional(callable()),
      defaultRefreshSeconds: z
        .union([z.literal(0), z.literal(2), z.literal(5), z.literal(15)], { error: 'must be 0, 2, 5 or 15' })
        .optional(),
      horizonWarning: z
        .object({
          xminAge: z.number().int().min(0).max(2_000_000_000).optional(),
          heldMs: z.number().int().min(0).max(86_400_000).optional(),
        })
        .strict()
        .optional(),
      actionBudgetMs: z.number().int().min(0).max(600_000).optional(),
      loginThrottle: z
        .object({
          freeAttempts: z.number().int().min(0).max(1000).optional(),
          baseDelayMs: z.number().int().min(0).max(3_600_000).optional(),
          maxDelayMs: z.number().int().min(0).max(3_600_000).optional(),
        })
        .strict()
        .optional(),
      clientKey: z.optional(callable()),
    })
    .strict(),
)

/** The option's shape as createApp checks it; its fields are checked by resolveDashboardOptions, which names them. */
export const dashboardOptionSchema = z.lazy(() => z.union([z.boolean(), z.record(z.string(), z.unknown())]))

/** The dashboard option of createApp, checked; undefined when the dashboard is off. */
export function resolveDashboardOptions(
  option: boolean | DashboardOptions | undefined,
): ResolvedDashboardOptions | undefined {
  if (option === undefined || typeof option === 'boolean')
    return option ? resolveDashboardOptions({}) : undefined
  const parsed = objectSchema.safeParse(option)
  if (!parsed.success) {
    const first = parsed.error.issues[0]
    throw new ConfigError(
      `Invalid createApp dashboard option: ${first?.path.join('.') || '(root)'} ${first?.message}`,
      toIssues(parsed.error.issues),
    )
  }
  return {
    path: option.path ?? '/dashboard',
    mountedAt: option.mountedAt ?? '',
    readOnly: option.readOnly ?? false,
    authorize: option.authorize,
    defaultRefreshSeconds: option.defaultRefreshSeconds ?? 0,
    horizonWarning: option.horizonWarning ?? {},
    actionBudgetMs: option.actionBudgetMs ?? 10_000,
    loginThrottle: { ...LOGIN_THROTTLE, ...option.loginThrottle },
    clientKey: option.clientKey,
  }
}
