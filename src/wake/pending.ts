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
  url: string
  promise: Promise<unknown>
  /** The request's body has been written to the connection (Node: undici's bodySent). */
  sent: boolean
}

const pending = new Set<Pending>()
let started = 0
const listeners = new Set<() => void>()
const notify = () => {
  for (const listener of listeners) listener()
}

/** Records a wake-up until it settles. Returns the promise. */
export function trackWakeup<T>(url: string, promise: Promise<T>): Promise<T> {
  started += 1
  const entry: Pending = { seq: started, url, promise, sent: false }
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

/**
 * A mark of the wake-ups started so far: a request takes one as it begins, and waits only for
 * those started after it. A server that serves its own drain URL (`next start`, a Node server)
 * would otherwise hold the drain's answer for the very wake-up that called it.
 */
export function wakeupMark(): number {
  return started
}

const after = (since: number) => [...pending].filter((entry) => entry.seq > since)

/** How many wake-ups are in flight (started after `since`, a wakeupMark). */
export function pendingWakeups(since = 0): number {
  return after(since).length
}

/** Hands every wake-up in flight to the platform's `waitUntil`. Returns how many. */
export function handOffWakeups(waitUntil: (promise: Promise<unknown>) => void): number {
  const list = [...pending].map((entry) => entry.promise)
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
