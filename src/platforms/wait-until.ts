/**
 * Keeping drain wake-ups alive past the response, for entry points on platforms that freeze
 * or stop a function once it has answered. No Node built-ins: edge entry points use it too.
 */
import { handOffWakeups, pendingWakeups, wakeupsSent } from '../wake/pending.js'

export type WaitUntil = (promise: Promise<unknown>) => void

/** Where Vercel's runtimes (Node and Edge) keep the current request's context; @vercel/functions reads it there too. */
const VERCEL_REQUEST_CONTEXT = Symbol.for('@vercel/request-context')

interface VercelRequestContext {
  waitUntil?: WaitUntil
}

/** The current Vercel request's `waitUntil`, when running on Vercel. */
export function vercelWaitUntil(): WaitUntil | undefined {
  const holder = (globalThis as Record<symbol, { get?: () => VercelRequestContext | undefined } | undefined>)[
    VERCEL_REQUEST_CONTEXT
  ]
  const context = holder?.get?.()
  const waitUntil = context?.waitUntil
  return typeof waitUntil === 'function' ? (promise) => waitUntil.call(context, promise) : undefined
}

/**
 * Keeps `promise` running after the response is sent: on Vercel (Node.js and Edge runtimes) it
 * goes to the current request's `waitUntil`. Returns true when it was handed off; false when
 * there is no request context (not on Vercel, or outside a request), and the caller should
 * await it before answering.
 *
 *   import { waitUntil } from 'sluice/edge'
 *   if (!waitUntil(sendAnalytics())) await sendAnalytics
 */
export function waitUntil(promise: Promise<unknown>): boolean {
  const hand = vercelWaitUntil()
  if (!hand) return false
  hand(promise)
  return true
}

/** Longest an entry point without `waitUntil` holds its answer for wake-ups to leave, ms. */
export const DEFAULT_WAKE_WAIT_MS = 1_000

/**
 * Call after the response is ready, before returning it: wake-ups in flight go to `waitUntil`
 * when there is one; otherwise this waits until they are sent or answered, at most `boundMs`.
 * `since` (a `wakeupMark()` taken as the request began) limits the wait to the wake-ups this
 * request may have started.
 */
export async function seeWakeupsOut(
  waitUntil: WaitUntil | undefined,
  boundMs = DEFAULT_WAKE_WAIT_MS,
  since = 0,
): Promise<void> {
  if (pendingWakeups(since) === 0) return
  if (waitUntil) handOffWakeups(waitUntil)
  else await wakeupsSent(boundMs, since)
}
