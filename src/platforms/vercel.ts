/**
 * `sluice/vercel`: route handlers for Vercel Functions and Next.js app routes. A drain's
 * budget is capped by the function's maxDuration less the time since the request arrived;
 * `/maintain` accepts Vercel cron's `Authorization: Bearer $CRON_SECRET`. Wake-ups sent
 * after an enqueue are handed to the request's `waitUntil`, so that they outlive the answer.
 *
 * `vercelHandlers` serves the whole HTTP API; `vercelDrain` and `vercelMaintain` serve one route
 * each, so that a function made of them bundles only the drain (or maintenance) and starts faster.
 */
import { type Context, Hono } from 'hono'
import * as z from 'zod/mini'
import { ConfigError } from '../errors.js'
import { type AppOptions, createApp } from '../http/app.js'
import { type DrainAppOptions, drainApp, maintainApp, validAppOptions } from '../http/drain-app.js'
import { defaultReporter, notFound, onError } from '../http/errors.js'
import { leanHono } from '../http/router.js'
import type { Sluice } from '../sluice.js'
import { wakeupMark } from '../wake/pending.js'
import { seeWakeupsOut, vercelWaitUntil } from './wait-until.js'

export { seeWakeupsOut, vercelWaitUntil, type WaitUntil, waitUntil } from './wait-until.js'

export interface VercelOptions extends Omit<AppOptions, 'remainingMs'> {
  /** The function's maxDuration, ms. Default SLUICE_MAX_DURATION_MS, else 60 s. */
  maxDurationMs?: number
  /** Where the routes are served. Default `/api` (so the cron path is `/api/maintain`). */
  basePath?: string
  /**
   * Where there is no request `waitUntil` (outside Vercel: `next start`, a Node server), the
   * longest an answer waits for the wake-ups its request started to be answered, ms. Default 1,000.
   */
  wakeWaitMs?: number
}

export type RouteHandler = (request: Request) => Response | Promise<Response>

export interface VercelHandlers {
  GET: RouteHandler
  POST: RouteHandler
}

export const DEFAULT_MAX_DURATION_MS = 60_000

const optionsSchema = z.looseObject({
  maxDurationMs: z.optional(z.int().check(z.positive(), z.maximum(3_600_000))),
  basePath: z.optional(
    z.string().check(z.regex(/^(\/[A-Za-z0-9._~-]+)*\/?$/, 'must be a path such as /api')),
  ),
  wakeWaitMs: z.optional(z.int().check(z.minimum(0), z.maximum(60_000))),
})

function envMaxDuration(env: Record<string, string | undefined>): number | undefined {
  const raw = env.SLUICE_MAX_DURATION_MS
  if (raw === undefined || raw.trim() === '') return undefined
  const ms = Number(raw)
  if (!Number.isInteger(ms) || ms <= 0 || ms > 3_600_000)
    throw new ConfigError(
      `Invalid SLUICE_MAX_DURATION_MS "${raw}": must be a whole number of ms, 1..3600000.`,
    )
  return ms
}

function processEnv(): Record<string, string | undefined> {
  return typeof process !== 'undefined' && process.env ? process.env : {}
}

/** The function's limit, ms: the option, else SLUICE_MAX_DURATION_MS, else 60 s, read at the first request. */
function maxDuration(explicit: number | undefined, env: Record<string, string | undefined> | undefined) {
  let ms = explicit
  return (): number => {
    ms ??= envMaxDuration(env ?? processEnv()) ?? DEFAULT_MAX_DURATION_MS
    return ms
  }
}

/**
 * What every request carries to the app as its env (`c.env`): when it arrived, so that a request
 * handed on to a lean app (vercelDrain's `drain.fetch`, with the same env) keeps its arrival time.
 */
interface Arrival {
  sluiceArrivedAt: number
}
type Timed = { Bindings: Arrival }

/**
 * Serves `app`, stamping each request with its arrival (before its body is read), and hands the
 * wake-ups it started to waitUntil. `app` is a lean one unless it mounts the whole API, whose
 * routes it then takes over.
 */
function serve(
  { onError: onErrorOption, wakeWaitMs }: Pick<VercelOptions, 'onError' | 'wakeWaitMs'>,
  mount: (app: Hono<Timed>) => void,
  app: Hono<Timed> = leanHono<Timed>(),
): RouteHandler {
  app.onError(onError(onErrorOption ?? defaultReporter))
  app.notFound(notFound)
  mount(app)
  // Wake-ups started by this request go to Vercel's waitUntil, so that they outlive the answer.
  return async (request) => {
    const since = wakeupMark()
    const response = await app.fetch(request, { sluiceArrivedAt: Date.now() } satisfies Arrival)
    await seeWakeupsOut(vercelWaitUntil(), wakeWaitMs, since)
    return response
  }
}

/** What is left of this request's function time, ms: the limit less the time since it arrived. */
const remaining =
  (limit: () => number) =>
  (c: Context): number =>
    limit() - (Date.now() - ((c.env as Partial<Arrival> | undefined)?.sluiceArrivedAt ?? Date.now()))

/**
 * `GET` and `POST` handlers serving the Sluice HTTP API under `basePath`: export them from
 * a Next.js app route (`app/api/[...route]/route.ts`) or a Vercel Function.
 */
export function vercelHandlers(sluice: Sluice, options: VercelOptions = {}): VercelHandlers {
  validAppOptions(optionsSchema, options, 'vercelHandlers')
  const { maxDurationMs, basePath = '/api', wakeWaitMs, ...appOptions } = options
  // Read at the first request: a framework's build imports this module without the environment.
  const limit = maxDuration(maxDurationMs, options.env)
  const handler = serve(
    { onError: appOptions.onError, wakeWaitMs },
    (app) => {
      app.route(
        basePath.replace(/\/$/, '') || '/',
        createApp(sluice, { ...appOptions, remainingMs: remaining(limit) }),
      )
    },
    new Hono<Timed>(),
  )
  return { GET: handler, POST: handler }
}

/** vercelDrain's and vercelMaintain's options: the lean app's (see drainApp) and the function's limit. */
export interface VercelDrainOptions extends Omit<DrainAppOptions, 'remainingMs'> {
  /** The function's maxDuration, ms. Default SLUICE_MAX_DURATION_MS, else 60 s. */
  maxDurationMs?: number
  /** As in vercelHandlers: how long an answer outside Vercel waits for its wake-ups, ms. Default 1,000. */
  wakeWaitMs?: number
}

/**
 * The drain alone, for a function of its own (`api/drain`): `POST` to its path drains, as
 * `POST /drain` does in vercelHandlers (same authentication, body and answer), within the
 * function's maxDuration. It bundles no admin API, OpenAPI or dashboard.
 */
export function vercelDrain(sluice: Sluice, options: VercelDrainOptions = {}): { POST: RouteHandler } {
  validAppOptions(optionsSchema, options, 'vercelDrain')
  const { maxDurationMs, wakeWaitMs, ...appOptions } = options
  const limit = maxDuration(maxDurationMs, options.env)
  const POST = serve({ onError: appOptions.onError, wakeWaitMs }, (app) => {
    const drain = drainApp(sluice, { ...appOptions, remainingMs: remaining(limit) })
    // Whatever path the function is served at, the request is the drain's.
    app.all('*', (c) => {
      const url = new URL(c.req.url)
      url.pathname = '/drain'
      return drain.fetch(new Request(url, c.req.raw), c.env)
    })
  })
  return { POST }
}

/**
 * Maintenance alone, for a function of its own (`api/maintain`) that Vercel cron calls with
 * `Authorization: Bearer $CRON_SECRET` (GET), as `/maintain` does in vercelHandlers.
 */
export function vercelMaintain(sluice: Sluice, options: VercelDrainOptions = {}): VercelHandlers {
  validAppOptions(optionsSchema, options, 'vercelMaintain')
  const { maxDurationMs: _limit, wakeWaitMs, ...appOptions } = options
  const handler = serve({ onError: appOptions.onError, wakeWaitMs }, (app) => {
    const maintain = maintainApp(sluice, appOptions)
    app.all('*', (c) => {
      const url = new URL(c.req.url)
      url.pathname = '/maintain'
      return maintain.fetch(new Request(url, c.req.raw), c.env)
    })
  })
  return { GET: handler, POST: handler }
}
