/**
 * Wake-ups sent after an enqueue, not yet answered. A platform freezes a function as soon
 * as its handler returns, so each platform entry point hands these on before returning: to
 * `waitUntil` where the platform has one (Vercel, Cloudflare Workers), otherwise it waits,
 * for a short bounded time, until each request has at least left (AWS Lambda). Module state,
 * shared by every request this instance serves: handing another request's wake-up to
 * `waitUntil` as well only keeps the instance up a little longer.
 */

interface Pending {
  /** Its place in the order wake-ups were started (see wakeupMark). */
  seq: number
  promise: Promise<unknown>
  /** The request's body has been written to the connection (Node: undici's bodySent). */
  sent: boolean
}

/** By wake-up id: the id its request carries (./send.ts, WAKE_ID_HEADER). */
const pending = new Map<string, Pending>()
let started = 0
const listeners = new Set<() => void>()
const notify = () => {
  for (const listener of listeners) listener()
}

/**
 * Records the wake-up whose request carries `id` until it settles. Call it before the request
 * can leave (in the same tick as the fetch starts). Returns the promise.
 */
export function trackWakeup<T>(id: string, promise: Promise<T>): Promise<T> {
  started += 1
  pending.set(id, { seq: started, promise, sent: false })
  promise.then(
    () => settle(id),
    () => settle(id),
  )
  return promise
}

function settle(id: string): void {
  pending.delete(id)
  notify()
}

/**
 * Marks the wake-up whose request carried `id` as sent (its request is on the wire). Only that
 * request's own report counts: another request to the same drain URL, another wake-up's among
 * them, says nothing of this one. An id tracked by no one (another copy of this module, or no
 * wake-up at all) marks nothing.
 */
export function markWakeupSent(id: string): void {
  const entry = pending.get(id)
  if (!entry || entry.sent) return
  entry.sent = true
  notify()
}

/**
 * A mark of the wake-ups started so far: a request takes one as it begins, and waits only for
 * those started after it. A server that serves its own drain URL (`next start`, a Node server)
 * would otherwise hold the drain's answer for the very wake-up that called it.
 */
export function wakeupMark(): number {
  return started
}

const after = (since: number) => [...pending.values()].filter((entry) => entry.seq > since)

/** How many wake-ups are in flight (started after `since`, a wakeupMark). */
export function pendingWakeups(since = 0): number {
  return after(since).length
}

/** Hands every wake-up in flight to the platform's `waitUntil`. Returns how many. */
export function handOffWakeups(waitUntil: (promise: Promise<unknown>) => void): number {
  const list = [...pending.values()].map((entry) => entry.promise)
  if (list.length > 0) waitUntil(Promise.allSettled(list))
  return list.length
}

/**
 * Resolves when every wake-up in flight (started after `since`, a wakeupMark) has been answered
 * or has at least been sent, or after `boundMs`, whichever comes first. Never rejects.
 */
export function wakeupsSent(boundMs: number, since = 0): Promise<void> {
  const done = () => after(since).every((entry) => entry.sent)
  if (done()) return Promise.resolve()
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer)
      listeners.delete(check)
      resolve()
    }
    const check = () => {
      if (done()) finish()
    }
    const timer = setTimeout(finish, boundMs)
    listeners.add(check)
  })
}
