/**
 * Signatures already accepted, each kept until its timestamp leaves the tolerance window
 * (after which the window check rejects it anyway). Bounded: when full, expired entries
 * go first, then the oldest accepted ones.
 *
 * This memory belongs to one instance. Serverless instances share nothing, so a request
 * replayed to another instance (or after a cold start) is stopped only by the timestamp
 * window; keep the window short, and make the work behind signed routes safe to repeat.
 */
export class ReplayGuard {
  readonly #seen = new Map<string, number>()
  readonly #capacity: number

  constructor(capacity: number) {
    this.#capacity = capacity
  }

  get size(): number {
    return this.#seen.size
  }

  /**
   * Records `key` as used until `expiresAt` (ms). Returns false when it was already used
   * and has not expired: the request is a replay. Check and record happen in one
   * synchronous step, so two concurrent copies of one request cannot both pass.
   */
  use(key: string, expiresAt: number, now: number): boolean {
    const until = this.#seen.get(key)
    if (until !== undefined && until >= now) return false
    this.#seen.delete(key)
    if (this.#seen.size >= this.#capacity) this.#evict(now)
    this.#seen.set(key, expiresAt)
    return true
  }

  #evict(now: number): void {
    for (const [key, until] of this.#seen) if (until < now) this.#seen.delete(key)
    // Still full of live entries: forget the oldest accepted (their window check still applies).
    const excess = this.#seen.size - this.#capacity + 1
    if (excess <= 0) return
    let dropped = 0
    for (const key of this.#seen.keys()) {
      if (dropped++ >= excess) break
      this.#seen.delete(key)
    }
  }
}
