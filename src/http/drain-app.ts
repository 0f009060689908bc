import type { Context, Hono, MiddlewareHandler } from 'hono'
import * as z from 'zod/mini'
import { callable } from '../callable.js'
import { findUnknownQueue } from '../drain/queues.js'
import { ConfigError, toIssues, ValidationError } from '../errors.js'
import type { Sluice } from '../sluice.js'
import { traceRoute } from '../tracing/http.js'
import { Tracing } from '../tracing/otel.js'
import { given, ONCE } from '../validate.js'
import { readJson } from './body.js'
import { drainBodySchema, maintainBodySchema } from './drain-body.js'
import { parseBody } from './enqueue-route.js'
import { defaultReporter, type ErrorReporter, notFound, onError } from './errors.js'
import { type AppAuthOptions, defaultEnv, type Env, type RouteGuards, routeGuards } from './guards.js'
import { leanHono } from './router.js'
import { hostListSchema, jsonOnly, originListSchema, sameSite } from './same-site.js'

/** What `POST /drain` needs; createApp passes its own, the lean drain app builds them. */
export interface DrainRouteParts {
  guard: RouteGuards
  maxBodyBytes: number
  remainingMs?: ((c: Context) => number | undefined) | undefined
  traced: (route?: string) => MiddlewareHandler
}

function remaining(option: DrainRouteParts['remainingMs'], c: Context): number | undefined {
  const ms = option?.(c)
  return typeof ms === 'number' && Number.isFinite(ms) ? Math.max(0, ms) : undefined
}

/** Refuses a queue that no job or subscriber of the app uses: a drain of it would claim nothing. */
function assertKnownQueues(queues: readonly string[] | undefined, known: readonly string[]): void {
  const unknown = findUnknownQueue(queues ?? [], known)
  if (!unknown) return
  const guess = unknown.guess ? ` Did you mean "${unknown.guess}"?` : ''
  throw new ValidationError(
    `Invalid request body at queues[${unknown.index}]: no job or subscriber of this app uses queue ` +
      `"${unknown.queue}".${guess} Queues: ${known.join(', ') || '(none)'}.`,
    [{ path: ['queues', unknown.index], message: 'is not a queue of any job or subscriber of this app' }],
  )
}

/** Adds `POST /drain` to `app`: the drain options in the body, the budget capped by the platform's time left. */
export function addDrainRoute(app: Hono, sluice: Sluice, parts: DrainRouteParts): void {
  app.post('/drain', parts.traced('/drain'), jsonOnly, parts.guard.write('/drain'), async (c) => {
    const { wakeId: _wakeId, ...body } = parseBody(drainBodySchema, await readJson(c, parts.maxBodyBytes, {}))
    assertKnownQueues(body.queues, sluice.config.queues)
    const platformRemainingMs = remaining(parts.remainingMs, c)
    const summary = await sluice.drain({
      ...body,
      ...(platformRemainingMs === undefined ? {} : { platformRemainingMs }),
    })
    return c.json(summary)
  })
}

export interface DrainAppOptions {
  auth?: AppAuthOptions | false
  env?: Env
  remainingMs?: (c: Context) => number | undefined
  maxBodyBytes?: number
  onError?: ErrorReporter
  allowedHosts?: string[]
  allowedOrigins?: string[]
}

/** The lean apps' options as an object schema (createApp extends it); drainAppOptionsSchema builds it at its first parse. */
export const drainAppOptionsObject = () =>
  z.strictObject({
    auth: z.optional(z.union([z.literal(false), z.record(z.string(), z.unknown())])),
    env: z.optional(z.record(z.string(), z.optional(z.string()))),
    remainingMs: z.optional(callable()),
    maxBodyBytes: z.optional(z.int().check(z.minimum(1), z.maximum(64 * 1024 * 1024))),
    onError: z.optional(callable()),
    allowedHosts: given(() => hostListSchema),
    allowedOrigins: given(() => originListSchema),
  })

export const drainAppOptionsSchema = z.lazy(drainAppOptionsObject)

/** Throws a ConfigError naming the first problem when `options` do not fit `schema`. */
export function validAppOptions(schema: z.core.$ZodType, options: unknown, what: string): void {
  const checked = z.safeParse(schema, options, ONCE)
  if (checked.success) return
  const first = checked.error.issues[0]
  throw new ConfigError(
    `Invalid ${what} options: ${first?.path.join('.') || '(root)'} ${first?.message}`,
    toIssues(checked.error.issues),
  )
}

/**
 * Adds `GET|POST /maintain` to `app`: the due maintenance tasks, with the maintain guard (cron secret
 * too). Its body is read as the drain's: up to maxBodyBytes, empty or a JSON object of its options.
 */
export function addMaintainRoute(
  app: Hono,
  sluice: Sluice,
  parts: Pick<DrainRouteParts, 'guard' | 'maxBodyBytes' | 'traced'>,
): void {
  app.on(
    ['GET', 'POST'],
    '/maintain',
    parts.traced('/maintain'),
    jsonOnly,
    parts.guard.maintain,
    async (c) => {
      parseBody(maintainBodySchema, await readJson(c, parts.maxBodyBytes, {}))
      return c.json(await sluice.maintain())
    },
  )
}

/** A Hono app with the common frame (errors, not-found, same-site rules) and the parts its routes need. */
function leanApp(
  sluice: Sluice,
  options: DrainAppOptions,
  what: string,
  add: (app: Hono, parts: DrainRouteParts) => void,
): Hono {
  validAppOptions(drainAppOptionsSchema, options, what)
  const maxBodyBytes = options.maxBodyBytes ?? sluice.config.maxPayloadBytes + 4096
  const tracing = new Tracing(sluice.config.tracing)
  const app = leanHono()
  app.onError(onError(options.onError ?? defaultReporter))
  app.notFound(notFound)
  app.use('*', sameSite(options))
  add(app, {
    guard: routeGuards(options.auth ?? {}, options.env ?? defaultEnv(), maxBodyBytes),
    maxBodyBytes,
    remainingMs: options.remainingMs,
    traced: (route) => traceRoute(tracing, route),
  })
  return app
}

/**
 * `POST /drain` alone, as a Hono app: what a drain function serves. It carries no admin API,
 * no OpenAPI document and no dashboard, so a function built from it bundles none of them.
 * The same authentication, errors and same-site rules as createApp.
 */
export function drainApp(sluice: Sluice, options: DrainAppOptions = {}): Hono {
  return leanApp(sluice, options, 'drain app', (app, parts) => addDrainRoute(app, sluice, parts))
}

/**
 * `GET|POST /maintain` alone, as a Hono app: what a maintenance function behind a cron's HTTP
 * call (Vercel cron) serves, with createApp's authentication (the cron secret included) and
 * nothing else. `remainingMs` is not used.
 */
export function maintainApp(sluice: Sluice, options: DrainAppOptions = {}): Hono {
  return leanApp(sluice, options, 'maintain app', (app, parts) => addMaintainRoute(app, sluice, parts))
}
