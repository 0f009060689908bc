import { byQueueOrder, handBackOf } from './batch.js'
import { type Ahead, type Claimed, merged } from './claimed.js'
import type { Claims } from './claims.js'
import type { DrainState } from './state.js'

/**
 * Claims sent ahead while a batch runs, each with the settle of the batches finished before it
 * was sent, so that the next batch is in hand when this one ends.
 */
export class Pipeline {
  /** Claims sent ahead, oldest first: each settles what had finished when it was sent. */
  private readonly pending: Ahead[] = []
  /** How many claims may be in flight at once. */
  private depth: number
  /**
   * The latest settle-and-claim statement's time on the server, ms (the rest of its round trip
   * is the network, the driver and the pool).
   */
  private serverMs = 0

  constructor(
    private readonly s: DrainState,
    private readonly claims: Claims,
  ) {
    // Single-consumer queues run their jobs in claim order: two claims of one drain in flight at
    // once could both take from one, so such a drain keeps one claim ahead at most.
    const ordered = s.config.queueSettings.some((q) => q.singleConsumer && s.queues.includes(q.name))
    this.depth = ordered ? 1 : (s.options.pipeline ?? s.config.drain.pipeline)
  }

  get inFlight(): number {
    return this.pending.length
  }

  /**
   * Claims the next batches while the drain's rows run, unless the batch must settle first: the
   * claim marked jobs `in_order` (a failure keeps its place, so nothing after it may be claimed
   * before that is recorded); or the last batch had failures (`healthy` false), whose settle may
   * change what the next claim may take (a circuit breaker tripping). Not when the queues had no
   * more to give. Jobs claimed ahead start once the batches before them are done: they must fit
   * the time those are expected to leave (`batchMs` each). A second claim goes out only while the
   * network's share of a round trip is longer than a batch's run (`ranMs`) and the statement's
   * time on the server together: what one claim ahead cannot hide. Claims in flight at once over
   * a near database only make the server's work contend (claims skipping each other's locked
   * rows), so there the pipeline stays at one.
   */
  fill(batchMs: number, ranMs: number, healthy: boolean): void {
    const s = this.s
    const want = Math.min(
      this.depth,
      1 + Math.floor(this.claims.network.ms / Math.max(1, ranMs + this.serverMs)),
    )
    while (
      this.pending.length < want &&
      s.rows.length >= s.latest.limit &&
      healthy &&
      !s.aborted &&
      !s.rows.some((row) => row.in_order)
    ) {
      const inFlight = this.pending.reduce((n, p) => n + p.plan.limit, 0)
      if (s.summary.claimed + inFlight >= s.maxJobs) break
      const next = s.plan(s.deadline - Date.now() - batchMs * (this.pending.length + 1))
      if (!next) break
      next.limit = Math.min(next.limit, s.maxJobs - s.summary.claimed - inFlight)
      this.send(next)
    }
  }

  private send(next: Ahead['plan']): void {
    // Claims in flight together may run on the server in either order.
    const concurrent = this.pending.length > 0
    for (const p of this.pending) p.concurrent = true
    const claiming = this.claims.settleThenClaim(next).then((got) => {
      if (got?.serverMs !== undefined) this.serverMs = got.serverMs
      return got
    })
    // It may fail before it is awaited: its error is read then, and must not count as an
    // unhandled rejection meanwhile (that ends a Node process).
    claiming.catch(() => {})
    this.pending.push({ plan: next, claiming, concurrent })
  }

  /**
   * The oldest claim sent ahead, awaited: its jobs, or none when it was lost with its connection
   * or found nothing. Claims that were in flight together may have been filled by the server in
   * either order, so the jobs of every claim in flight with it are awaited too and returned as one
   * batch in claim order. Jobs to run in order that such a claim took go back (another claim of
   * this drain may hold their queue's earlier jobs), and from then on the drain keeps one claim in
   * flight.
   */
  async receive(): Promise<Claimed | undefined> {
    const s = this.s
    const head = this.pending.shift()
    if (!head) return undefined
    const together = head.concurrent ? [head, ...this.pending.splice(0)] : [head]
    let got: Claimed | undefined
    for (const ahead of together) {
      const one = await ahead.claiming
      if (!one) continue
      s.summary.claimed += one.rows.length
      s.latest = merged(s.latest, ahead.plan, one, got !== undefined)
      got = s.latest.got
    }
    if (!got) return undefined
    if (together.length > 1) got.rows.sort(byQueueOrder)
    if (!got.rows.some((row) => row.in_order)) return got
    this.depth = 1
    if (!head.concurrent) return got
    for (const row of got.rows) if (row.in_order) s.unsettled.handBacks.push(handBackOf(row))
    return { ...got, rows: got.rows.filter((row) => !row.in_order) }
  }

  /** The next batch claimed ahead with jobs in it, awaited; undefined when none of them has any. */
  async next(): Promise<Claimed | undefined> {
    let next: Claimed | undefined
    while (this.pending.length > 0 && !next?.rows.length) next = await this.receive()
    return next?.rows.length ? next : undefined
  }

  /** Every claim still in flight, awaited; their jobs go back in place unstarted. */
  async handBack(): Promise<void> {
    while (this.pending.length > 0) {
      const got = await this.receive()
      for (const row of got?.rows ?? []) this.s.unsettled.handBacks.push(handBackOf(row))
    }
  }
}
