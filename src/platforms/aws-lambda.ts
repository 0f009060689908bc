/**
 * `sluice/aws-lambda`: Lambda handlers for the drain (function URL or API Gateway v2),
 * maintenance (an EventBridge schedule) and the whole HTTP API. A drain's budget is
 * capped by what Lambda says is left of the invocation. Lambda freezes the process as soon
 * as a handler returns, so each handler first sees the wake-ups it started out on the wire.
 */
import { subscribe } from 'node:diagnostics_channel'
import type { Context, Hono } from 'hono'
import { handle, type LambdaContext } from 'hono/aws-lambda'
import { ConfigError, ValidationError } from '../errors.js'
import { type AppOptions, createApp } from '../http/app.js'
import { type DrainAppOptions, drainApp } from '../http/drain-app.js'
import { leanHono } from '../http/router.js'
import type { MaintenanceReport } from '../maintain/maintain.js'
import type { Sluice } from '../sluice.js'
import { markWakeupSent, wakeupMark } from '../wake/pending.js'
import { WAKE_ID_HEADER } from '../wake/send.js'
import {
  checkHttpEvent,
  drainNotHttp,
  errorResult,
  httpEventKind,
  isSourceBatch,
  type LambdaHttpResult,
  maintainOnRecords,
  maintainOverHttp,
  type NotHttp,
  notHttpEvent,
} from './lambda-events.js'
import { seeWakeupsOut } from './wait-until.js'

export type { LambdaContext } from 'hono/aws-lambda'
export type { LambdaHttpResult } from './lambda-events.js'

/** createApp's options (the remaining time comes from the Lambda context), and how long to see wake-ups out. */
export type LambdaAppOptions = Omit<AppOptions, 'remainingMs'> & {
  /**
   * Longest a handler waits, after its answer is ready, for the drain wake-ups it started to
   * leave (their request written to the connection; not the drain's answer). Default 1,000 ms.
   */
  wakeWaitMs?: number
}

/** drainHandler's options: the drain app's (see drainApp), and how long to see wake-ups out. */
export type LambdaDrainOptions = Omit<DrainAppOptions, 'remainingMs'> & { wakeWaitMs?: number }

export const DEFAULT_WAKE_WAIT_MS = 1_000

let watching = false

/**
 * Node's fetch (undici) reports each request body it has written: that is when a wake-up has
 * left. The request is told by the wake-up id it carries, never by its URL: every wake-up goes
 * to the same drain URL, and one that left (and was answered) must not stand for another.
 */
function watchSentRequests(): void {
  if (watching) return
  watching = true
  subscribe('undici:request:bodySent', (message) => {
    const id = headerValue((message as { request?: { headers?: unknown } }).request?.headers, WAKE_ID_HEADER)
    if (id !== undefined) markWakeupSent(id)
  })
}

/**
 * A header of an undici request as its diagnostics channels show it, by release: `[name, value, …]`
 * (undici 7, Node 24's fetch) or the raw `name: value\r\n` lines (Node 20's fetch).
 */
function headerValue(headers: unknown, name: string): string | undefined {
  const wanted = name.toLowerCase()
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2)
      if (String(headers[i]).toLowerCase() === wanted) return String(headers[i + 1])
  } else if (typeof headers === 'string') {
    for (const line of headers.split('\r\n')) {
      const colon = line.indexOf(':')
      if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === wanted)
        return line.slice(colon + 1).trim()
    }
  }
  return undefined
}

/** The handler, returning only once the wake-ups it started are on the wire (or `wakeWaitMs` passed). */
function withWakeupsOut<A extends unknown[], R>(
  handler: (...args: A) => Promise<R>,
  wakeWaitMs = DEFAULT_WAKE_WAIT_MS,
): (...args: A) => Promise<R> {
  if (!Number.isInteger(wakeWaitMs) || wakeWaitMs < 0 || wakeWaitMs > 60_000)
    throw new ConfigError(`Invalid wakeWaitMs ${wakeWaitMs}: must be a whole number of ms, 0..60000.`)
  watchSentRequests()
  return async (...args) => {
    const since = wakeupMark()
    try {
      return await handler(...args)
    } finally {
      // No waitUntil on Lambda: wait, bounded, until this invocation's wake-ups are on the wire.
      await seeWakeupsOut(undefined, wakeWaitMs, since)
    }
  }
}

/**
 * hono/aws-lambda's handler for `app`, answering in Sluice's JSON error shape what hono cannot
 * read: an event that is no HTTP request, or with a field hono could not turn into a fetch
 * Request (checkHttpEvent refuses it before hono, which would log a stack trace), a body marked
 * base64 that is not, and whatever hono still answers itself without reaching the app (its own
 * answer is plain text and bypasses the app's onError). A GET or HEAD is served without its body.
 */
function httpHandler(app: Hono, notHttp: NotHttp = notHttpEvent) {
  // The events that reached the app: hono answers the others itself, without calling it.
  const reached = new WeakSet<object>()
  const handler = handle({
    fetch: (request: Request, env: { event: object }) => {
      reached.add(env.event)
      return app.fetch(request, env)
    },
  } as unknown as Hono)
  const unreadable = (event: unknown) =>
    errorResult(event, new ValidationError('Invalid Lambda event: it cannot be read as an HTTP request.'))
  return async (event: unknown, context?: LambdaContext): Promise<LambdaHttpResult> => {
    const checked = checkHttpEvent(event, notHttp)
    if ('error' in checked) return errorResult(event, checked.error)
    let result: LambdaHttpResult
    try {
      result = (await handler(
        checked.event as Parameters<typeof handler>[0],
        context as LambdaContext,
      )) as LambdaHttpResult
    } catch {
      return unreadable(event)
    }
    return reached.has(checked.event) ? result : unreadable(event)
  }
}

/** An EventBridge (CloudWatch Events) scheduled event, as a `rate(…)` or `cron(…)` rule delivers it. */
export interface ScheduledEvent {
  'detail-type'?: string
  source?: string
  time?: string
  [key: string]: unknown
}

/**
 * What Lambda says is left of this invocation, ms. hono/aws-lambda hands the Lambda
 * context to the app as `c.env.lambdaContext`.
 */
export function lambdaRemainingMs(c: Context): number | undefined {
  const context = (c.env as { lambdaContext?: Partial<LambdaContext> } | undefined)?.lambdaContext
  return typeof context?.getRemainingTimeInMillis === 'function'
    ? context.getRemainingTimeInMillis()
    : undefined
}

/** The whole HTTP API (enqueue, drain, maintain, health, metrics) behind API Gateway v1/v2, an ALB or a function URL. */
export function apiHandler(sluice: Sluice, options: LambdaAppOptions = {}) {
  const { wakeWaitMs, ...appOptions } = options
  return withWakeupsOut(
    httpHandler(createApp(sluice, { ...appOptions, remainingMs: lambdaRemainingMs })),
    wakeWaitMs,
  )
}

/**
 * The drain behind a function URL (or an API Gateway v2 route): `POST` to any path runs
 * `POST /drain` with the app's authentication, its budget capped by the invocation's
 * remaining time. The JSON body takes the drain options (`queues`, `budgetMs`, `maxJobs`,
 * `concurrency`); the answer is the drain summary.
 */
export function drainHandler(sluice: Sluice, options: LambdaDrainOptions = {}) {
  const { wakeWaitMs, ...appOptions } = options
  // The drain alone: no admin API, OpenAPI or dashboard in a drain function's bundle.
  const app = drainApp(sluice, { ...appOptions, remainingMs: lambdaRemainingMs })
  const drainOnly = leanHono()
  drainOnly.all('*', (c) => {
    const url = new URL(c.req.url)
    url.pathname = '/drain'
    return app.fetch(new Request(url, c.req.raw), c.env)
  })
  // Jobs may enqueue more jobs: their wake-ups leave before the function freezes too.
  return withWakeupsOut(httpHandler(drainOnly, drainNotHttp), wakeWaitMs)
}

/**
 * Maintenance on an EventBridge schedule (`rate(1 minute)`): runs the tasks that are due
 * and returns the report. Overlapping or repeated deliveries are safe: each due task runs once.
 * An HTTP event (function URL, API Gateway, ALB) runs nothing: it gets a JSON 404 saying that
 * over HTTP, maintenance is `POST /maintain` on the api function, with credentials.
 */
export function maintainHandler(sluice: Sluice, options: { wakeWaitMs?: number } = {}) {
  return withWakeupsOut(
    async (
      event?: ScheduledEvent,
      _context?: Partial<LambdaContext>,
    ): Promise<MaintenanceReport | LambdaHttpResult> => {
      if (httpEventKind(event)) return errorResult(event, maintainOverHttp())
      if (isSourceBatch(event)) throw maintainOnRecords(event)
      return sluice.maintain()
    },
    options.wakeWaitMs,
  )
}
