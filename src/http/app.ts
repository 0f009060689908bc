import { type Context, Hono } from 'hono'
import * as z from 'zod'
import { publishRequestSchema } from '../events/publish.js'
import { assertTopic } from '../events/topics.js'
import type { Sluice } from '../sluice.js'
import { traceRoute } from '../tracing/http.js'
import { Tracing } from '../tracing/otel.js'
import { type AdminOptions, adminApp } from './admin/app.js'
import { coreOperations } from './admin/core.js'
import { ADMIN_PREFIX, openApiDocument } from './admin/openapi.js'
import { adminOperations } from './admin/routes.js'
import { readJson } from './body.js'
import { mountDashboard } from './dashboard/app.js'
import { type DashboardOptions, dashboardOptionSchema } from './dashboard/options.js'
import { addDrainRoute, addMaintainRoute, drainAppOptionsObject, validAppOptions } from './drain-app.js'
import { enqueueRoute, parseBody } from './enqueue-route.js'
import { defaultReporter, type ErrorReporter, notFound, onError, unhealthy } from './errors.js'
import { type AppAuthOptions, defaultEnv, type Env, routeGuards } from './guards.js'
import { PROMETHEUS_CONTENT_TYPE, toPrometheus } from './prometheus.js'
import { jsonOnly, sameSite } from './same-site.js'

export interface AppOptions {
  /** Credentials per route (see AppAuthOptions). `false` serves every route unauthenticated: local development only. */
  auth?: AppAuthOptions | false
  /** Where SLUICE_SECRET and CRON_SECRET come from. Default `process.env` where it exists. */
  env?: Env
  /** What the platform says is left of this invocation, ms; caps a drain's budget. */
  remainingMs?: (c: Context) => number | undefined
  /** Largest request body, bytes. Default the Sluice's maxPayloadBytes plus 4 KiB for the envelope. */
  maxBodyBytes?: number
  /** How long /health waits for the database before answering 503, ms. Default 5 s. */
  healthTimeoutMs?: number
  /** Receives every 5xx failure (the response itself carries no internals). Default console.error. */
  onError?: ErrorReporter
  /**
   * Host names this app answers to (the Host header), e.g. `['api.example.com', '*.vercel.app']`;
   * others get 403. Default any: set it where DNS rebinding matters (a private network).
   */
  allowedHosts?: string[]
  /**
   * Browser origins besides the app's own that may call it, e.g. `['https://admin.example.com']`.
   * A request with any other Origin header gets 403. Default none.
   */
  allowedOrigins?: string[]
  /** The admin API under /api/v1 (bearer token). `readOnly: true` refuses its writes with 403 READ_ONLY. */
  admin?: AdminOptions
  /**
   * The operator's dashboard under `/dashboard` (or `path`): `true`, or its options. Default off.
   * Operators log in with the app secret unless `authorize` decides; see docs/dashboard.md.
   */
  dashboard?: boolean | DashboardOptions
  /**
   * Show the SQL text (first 200 characters) of the other database sessions that hold the xmin
   * horizon, on `/api/v1/database` and the dashboard's database page. They may belong to other
   * applications sharing the database: by default only their pid, application name, state and age.
   */
  showSessionQueries?: boolean
}

// The drain app's options (zod/mini, which the drain function bundles) and the full app's own.
const appOptionsSchema = z.strictObject({
  ...drainAppOptionsObject().shape,
  healthTimeoutMs: z.number().int().min(1).max(60_000).optional(),
  admin: z.object({ readOnly: z.boolean().optional() }).strict().optional(),
  dashboard: dashboardOptionSchema.optional(),
  showSessionQueries: z.boolean().optional(),
})

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The Sluice HTTP API as one Hono app, mountable under any path
 * (`parent.route('/sluice', createApp(sluice))`). Every failure of its routes is JSON
 * `{ error: { code, message, issues? } }`; its JSON 404 answers unknown paths when it is
 * served on its own (mounted, the parent's not-found handler decides). The secrets are read at
 * the first request: without one (and without `auth: false`), a route that needs one answers
 * 500 `INVALID_CONFIG`, and `onError` receives the error naming the variable.
 */
export function createApp(sluice: Sluice, options: AppOptions = {}): Hono {
  validAppOptions(appOptionsSchema, options, 'createApp')
  const maxBodyBytes = options.maxBodyBytes ?? sluice.config.maxPayloadBytes + 4096
  const guard = routeGuards(options.auth ?? {}, options.env ?? defaultEnv(), maxBodyBytes)
  const healthTimeoutMs = options.healthTimeoutMs ?? 5_000

  // A span per request when the Sluice traces (see traceRoute); nothing otherwise.
  const tracing = new Tracing(sluice.config.tracing)
  const traced = (route?: string) => traceRoute(tracing, route)

  const app = new Hono()
  app.onError(onError(options.onError ?? defaultReporter))
  app.notFound(notFound)
  // Before authentication and before any body is read: see same-site.ts.
  app.use('*', sameSite(options))

  app.post(
    '/jobs/:name',
    traced('/jobs/:name'),
    jsonOnly,
    guard.write('/jobs/:name'),
    enqueueRoute(
      (name) => sluice.config.jobs.get(name),
      (job, input, opts) => sluice.enqueue(job, input as never, opts),
      maxBodyBytes,
    ),
  )

  app.post('/events/:topic', traced('/events/:topic'), jsonOnly, guard.write('/events/:topic'), async (c) => {
    const topic = assertTopic(c.req.param('topic'))
    const body = parseBody(publishRequestSchema, await readJson(c, maxBodyBytes))
    const result = await sluice.publish(topic, body.payload, {
      ...(body.eventId === undefined ? {} : { eventId: body.eventId }),
      ...(body.delay === undefined ? {} : { delay: body.delay }),
      ...(body.headers === undefined ? {} : { headers: body.headers }),
    })
    return c.json(result, 202)
  })

  addDrainRoute(app, sluice, { guard, maxBodyBytes, remainingMs: options.remainingMs, traced })

  addMaintainRoute(app, sluice, { guard, maxBodyBytes, traced })

  app.get('/health', traced('/health'), guard.health, async (c) => {
    const started = performance.now()
    try {
      await withTimeout(sluice.inspect.health(), healthTimeoutMs)
    } catch (error) {
      return c.json(unhealthy(error), 503)
    }
    return c.json({ ok: true, database: 'ok', latencyMs: Math.round(performance.now() - started) })
  })

  app.get('/metrics', traced('/metrics'), guard.metrics, async (c) => {
    const { queues, partitions } = await sluice.inspect.scrape()
    const text = toPrometheus(queues, partitions)
    return c.body(text, 200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE, 'Cache-Control': 'no-store' })
  })

  app.use(`${ADMIN_PREFIX}/*`, traced())
  app.route(
    ADMIN_PREFIX,
    adminApp(sluice, guard.admin, {
      ...options.admin,
      maxBodyBytes,
      showSessionQueries: options.showSessionQueries ?? false,
    }),
  )
  let document: object | undefined
  app.get('/openapi.json', traced('/openapi.json'), guard.admin, (c) => {
    document ??= openApiDocument(coreOperations, adminOperations(sluice))
    return c.json(document)
  })

  const env = options.env ?? defaultEnv()
  mountDashboard(app, sluice, { ...options, env, report: options.onError ?? defaultReporter })
  return app
}
