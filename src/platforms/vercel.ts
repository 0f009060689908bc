/**
 * `sluice/vercel`: route handlers for Vercel Functions and Next.js app routes. A drain's
 * budget is capped by the function's maxDuration less the time since the request arrived;
 * `/maintain` accepts Vercel cron's `Authorization: Bearer $CRON_SECRET`. Wake-ups sent
 * after an enqueue are handed to the request's `waitUntil`, so that they outlive the answer.
 */
import { Hono } from 'hono'
import { handle } from 'hono/vercel'
import * as z from 'zod'
import { ConfigError, toIssues } from '../errors.js'
import { type AppOptions, createApp } from '../http/app.js'
import { defaultReporter, notFound, onError } from '../http/errors.js'
import type { Sluice } from '../sluice.js'
import { ONCE } from '../validate.js'
import { seeWakeupsOut, vercelWaitUntil } from './wait-until.js'

export { seeWakeupsOut, vercelWaitUntil, type WaitUntil, waitUntil } from './wait-until.js'

export interface VercelOptions extends Omit<AppOptions, 'remainingMs'> {
  /** The function's maxDuration, ms. Default SLUICE_MAX_DURATION_MS, else 60 s. */
  maxDurationMs?: number
  /** Where the routes are served. Default `/api` (so the cron path is `/api/maintain`). */
  basePath?: string
}

export type RouteHandler = (request: Request) => Response | Promise<Response>

export interface VercelHandlers {
  GET: RouteHandler
  POST: RouteHandler
}

export const DEFAULT_MAX_DURATION_MS = 60_000

const optionsSchema = z
  .object({
    maxDurationMs: z.number().int().positive().max(3_600_000).optional(),
    basePath: z
      .string()
      .regex(/^(\/[A-Za-z0-9._~-]+)*\/?$/, 'must be a path such as /api')
      .optional(),
  })
  .passthrough()

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

/**
 * `GET` and `POST` handlers serving the Sluice HTTP API under `basePath`: export them from
 * a Next.js app route (`app/api/[...route]/route.ts`) or a Vercel Function.
 */
export function vercelHandlers(sluice: Sluice, options: VercelOptions = {}): VercelHandlers {
  const parsed = optionsSchema.safeParse(options, ONCE)
  if (!parsed.success) {
    const first = parsed.error.issues[0]
    throw new ConfigError(
      `Invalid vercelHandlers options: ${first?.path.join('.') || '(root)'} ${first?.message}`,
      toIssues(parsed.error.issues),
    )
  }
  const { maxDurationMs: explicit, basePath = '/api', ...appOptions } = options
  // Read at the first request: a framework's build imports this module without the environment.
  let maxDurationMs = explicit
  const limit = (): number => {
    maxDurationMs ??= envMaxDuration(options.env ?? processEnv()) ?? DEFAULT_MAX_DURATION_MS
    return maxDurationMs
  }

  const app = new Hono<{ Variables: { sluiceStartedAt: number } }>()
  app.onError(onError(appOptions.onError ?? defaultReporter))
  app.notFound(notFound)
  app.use('*', async (c, next) => {
    c.set('sluiceStartedAt', Date.now())
    await next()
  })
  const api = createApp(sluice, {
    ...appOptions,
    remainingMs: (c) =>
      limit() - (Date.now() - ((c.get('sluiceStartedAt') as number | undefined) ?? Date.now())),
  })
  app.route(basePath.replace(/\/$/, '') || '/', api)
  const served = handle(app) as RouteHandler
  // Wake-ups started by this request go to Vercel's waitUntil, so that they outlive the answer.
  const handler: RouteHandler = async (request) => {
    const response = await served(request)
    await seeWakeupsOut(vercelWaitUntil())
    return response
  }
  return { GET: handler, POST: handler }
}
