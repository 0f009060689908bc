import type { Db } from '../db/types.js'

/** A network share below this is a near database's: the drain then keeps one claim in flight. */
export const NEAR_MS = 5
/** Round trips timed before the estimate is trusted: until then the drain keeps one claim in flight. */
export const NETWORK_SAMPLES = 12
/** A round trip whose event loop was busy for more of it than this (and than NEAR_MS) is not timed. */
export const BUSY_SHARE = 0.25

/** A statement's send: when, and the event loop's busy time then. */
export interface Sent {
  at: number
  active: number
}

/**
 * The network's share of a settle-and-claim statement's round trip: the round trip, less the
 * statement's time on the server, less the time this process's event loop was busy meanwhile (a
 * round trip is timed when its promise settles, which waits for the batch's handlers). It is the
 * smallest of the drain's round trips: a network never answers quicker than its distance, while a
 * loaded machine only ever adds. Zero until NETWORK_SAMPLES round trips are timed, and below
 * NEAR_MS. Kept per database client across drains (`networkOf`): a warm function's drains start
 * from what its earlier drains measured.
 *
 * The busy time is subtracted whole, though only the part after the answer arrived delayed it: a
 * round trip busy for more than BUSY_SHARE of its length, and for more than NEAR_MS (handlers that
 * ran while it was in flight, or a loaded machine that descheduled this process), says little
 * about the network and is not timed: subtracting so much would make a far database look near for
 * good. Busy for less than NEAR_MS, a round trip can at worst make a database near by NEAR_MS look
 * near.
 */
/**
 * Milliseconds this event loop has spent busy, from Node's global `performance` (the same object
 * node:perf_hooks exports, without importing that module at every cold start); 0 elsewhere.
 */
function busyMs(): number {
  const perf = performance as { eventLoopUtilization?: () => { active: number } }
  return perf.eventLoopUtilization?.().active ?? 0
}

export class NetworkShare {
  private least = Number.POSITIVE_INFINITY
  private samples = 0

  static send(): Sent {
    return { at: performance.now(), active: busyMs() }
  }

  /** Times a round trip sent at `sent` that has just come back. */
  record(sent: Sent, serverMs: number): void {
    this.time(performance.now() - sent.at, serverMs, busyMs() - sent.active)
  }

  /** Times one round trip of `roundTripMs`, `serverMs` of it on the server, with the event loop busy for `busyMs`. */
  time(roundTripMs: number, serverMs: number, busyMs: number): void {
    if (busyMs > Math.max(NEAR_MS, roundTripMs * BUSY_SHARE)) return
    this.add(roundTripMs - serverMs - busyMs)
  }

  /** One round trip's network share, ms. */
  add(shareMs: number): void {
    this.least = Math.min(this.least, Math.max(0, shareMs))
    this.samples++
  }

  get ms(): number {
    if (this.samples < NETWORK_SAMPLES || this.least < NEAR_MS) return 0
    return this.least
  }
}

const shares = new WeakMap<Db, NetworkShare>()

/** The network share measured over this client's drains so far. */
export function networkOf(db: Db): NetworkShare {
  let share = shares.get(db)
  if (!share) {
    share = new NetworkShare()
    shares.set(db, share)
  }
  return share
}
