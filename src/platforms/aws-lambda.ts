/**
 * `sluice/aws-lambda`: Lambda handlers for the drain (function URL or API Gateway v2),
 * maintenance (an EventBridge schedule) and the whole HTTP API. A drain's budget is
 * capped by what Lambda says is left of the invocation.
 */
import { type Context, Hono } from 'hono'
import { handle, type LambdaContext } from 'hono/aws-lambda'
import { type AppOptions, createApp } from '../http/app.js'
import type { MaintenanceReport } from '../maintain/maintain.js'
import type { Sluice } from '../sluice.js'

export type { LambdaContext } from 'hono/aws-lambda'

/** createApp's options; the remaining time comes from the Lambda context. */
export type LambdaAppOptions = Omit<AppOptions, 'remainingMs'>

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
  return handle(createApp(sluice, { ...options, remainingMs: lambdaRemainingMs }))
}

/**
 * The drain behind a function URL (or an API Gateway v2 route): `POST` to any path runs
 * `POST /drain` with the app's authentication, its budget capped by the invocation's
 * remaining time. The JSON body takes the drain options (`queues`, `budgetMs`, `maxJobs`,
 * `concurrency`); the answer is the drain summary.
 */
export function drainHandler(sluice: Sluice, options: LambdaAppOptions = {}) {
  const app = createApp(sluice, { ...options, remainingMs: lambdaRemainingMs })
  const drainOnly = new Hono()
  drainOnly.all('*', (c) => {
    const url = new URL(c.req.url)
    url.pathname = '/drain'
    return app.fetch(new Request(url, c.req.raw), c.env)
  })
  return handle(drainOnly)
}

/**
 * Maintenance on an EventBridge schedule (`rate(1 minute)`): runs the tasks that are due
 * and returns the report. Overlapping or repeated deliveries are safe: each due task runs once.
 */
export function maintainHandler(sluice: Sluice) {
  return async (_event?: ScheduledEvent, _context?: Partial<LambdaContext>): Promise<MaintenanceReport> =>
    sluice.maintain()
}
