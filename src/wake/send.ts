import { sign } from '../crypto/signature.js'
import { trackWakeup } from './pending.js'

export interface WakeOptions {
  /** The drain endpoint (`POST`), e.g. https://example.com/api/drain. Default SLUICE_DRAIN_URL. */
  url: string | undefined
  /** Signs wake-ups for signatureAuth. Default the first SLUICE_SECRET. */
  secret: string | undefined
  /** Wake after enqueue (at most once per queue per debounce window). Default true when a URL is set. */
  onEnqueue: boolean
  debounceMs: number
  /** How long a wake-up request may take before it is abandoned, ms. */
  timeoutMs: number
  /** Most drains maintenance wakes per queue at once. */
  maxParallel: number
  /** Backlog one drain is expected to take; maintenance wakes ceil(backlog / this), up to maxParallel. */
  jobsPerDrain: number
  /** Keeps the process alive for the request (Vercel's or Cloudflare's waitUntil). */
  waitUntil: ((promise: Promise<unknown>) => void) | undefined
}

/** Whether writes of due jobs (enqueue, publish, invoke, a parent made due) wake their queues' drains. */
export function wakesOnWrite(options: Readonly<WakeOptions>): boolean {
  return options.onEnqueue && options.url !== undefined
}

/**
 * Header carrying a wake-up's id (its body's `wakeId`): the entry points that see wake-ups out
 * by watching requests leave (`sluice/aws-lambda`) tell by it which wake-up a request is.
 */
export const WAKE_ID_HEADER = 'Sluice-Wake-Id'

/**
 * wake() for one drain of `queue`, without waiting, tracked by its id until its request has
 * left (./pending.ts): the platform entry point sees it out before the function can be frozen.
 */
export function wakeSoon(options: Readonly<WakeOptions>, queue: string): void {
  if (!options.url) return
  const wakeId = crypto.randomUUID()
  void trackWakeup(wakeId, handOff(options, [post(options, options.url, queue, wakeId)]))
}

export const WAKE_DEFAULTS = { debounceMs: 1_000, timeoutMs: 1_500, maxParallel: 4, jobsPerDrain: 200 }

/**
 * Posts `count` signed drain requests for `queue` and resolves to how many were taken
 * (answered OK, or still running when abandoned after `timeoutMs`: the drain it started
 * keeps running on its own platform). Never throws: a failed wake-up only means the drain
 * starts at the next wake-up or cron tick.
 */
export function wake(options: WakeOptions, queue: string, count = 1): Promise<number> {
  const url = options.url
  if (!url || count < 1) return Promise.resolve(0)
  return handOff(
    options,
    Array.from({ length: count }, () => post(options, url, queue, crypto.randomUUID())),
  )
}

/** How many of `requests` were taken; handed to `waitUntil` when there is one. */
function handOff(options: Readonly<WakeOptions>, requests: Promise<boolean>[]): Promise<number> {
  const sent = Promise.all(requests).then((results) => results.filter(Boolean).length)
  options.waitUntil?.(sent)
  return sent
}

/** One signed drain request for `queue`, carrying `wakeId` in its body and in WAKE_ID_HEADER. */
async function post(
  options: Readonly<WakeOptions>,
  url: string,
  queue: string,
  wakeId: string,
): Promise<boolean> {
  const body = JSON.stringify({ queues: [queue], wakeId })
  try {
    const headers: Record<string, string> = { 'content-type': 'application/json', [WAKE_ID_HEADER]: wakeId }
    // Signed for the drain route, whatever path SLUICE_DRAIN_URL serves it under.
    if (options.secret)
      Object.assign(headers, await sign(options.secret, { method: 'POST', path: '/drain', body }))
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(options.timeoutMs),
    })
    await response.body?.cancel().catch(() => {})
    return response.ok
  } catch (error) {
    // A drain answers when it is done; giving up on the answer does not stop the drain.
    return error instanceof Error && error.name === 'TimeoutError'
  }
}
