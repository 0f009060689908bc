/**
 * Wake-ups sent after an enqueue, not yet answered. A platform freezes a function as soon
 * as its handler returns, so each platform entry point hands these on before returning: to
 * `waitUntil` where the platform has one (Vercel, Cloudflare Workers), otherwise it waits,
 * for a short bounded time, until each request has at least left (AWS Lambda). Module state,
 * shared by every request this instance serves: handing another request's wake-up to
 * `waitUntil` as well only keeps the instance up a little longer.
 */

interface Pending {
  url: string
  promise: Promise<unknown>
  /** The request's body has been written to the connection (Node: undici's bodySent). */
  sent: boolean
}

const pending = new Set<Pending>()
const listeners = new Set<() => void>()
const notify = () => {
  for (const listener of listeners) listener()
}

/** Records a wake-up until it settles. Returns the promise. */
export function trackWakeup<T>(url: string, promise: Promise<T>): Promise<T> {
  const entry: Pending = { url, promise, sent: false }
  pending.add(entry)
  promise.then(
    () => settle(entry),
    () => settle(entry),
  )
  return promise
}

function settle(entry: Pending): void {
  pending.delete(entry)
  notify()
}

/** Marks the oldest unsent wake-up to `url` as sent (its request is on the wire). */
export function markWakeupSent(url: string): void {
  for (const entry of pending) {
    if (!entry.sent && sameEndpoint(entry.url, url)) {
      entry.sent = true
      notify()
      return
    }
  }
}

function sameEndpoint(a: string, b: string): boolean {
  try {
    const [x, y] = [new URL(a), new URL(b)]
    return x.origin === y.origin && x.pathname === y.pathname
  } catch {
    return false
  }
}

/** How many wake-ups are in flight. */
export function pendingWakeups(): number {
  return pending.size
}

/** Hands every wake-up in flight to the platform's `waitUntil`. Returns how many. */
export function handOffWakeups(waitUntil: (promise: Promise<unknown>) => void): number {
  const list = [...pending].map((entry) => entry.promise)
  if (list.length > 0) waitUntil(Promise.allSettled(list))
  return list.length
}

/**
 * Resolves when every wake-up in flight has been answered or has at least been sent, or
 * after `boundMs`, whichever comes first. Never rejects.
 */
export function wakeupsSent(boundMs: number): Promise<void> {
  const done = () => [...pending].every((entry) => entry.sent)
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
