import { isTransient } from '../db/errors.js'
import {
  type ClaimRow,
  claim,
  type DurationsColumn,
  type SettleAndClaimRow,
  type SettleRow,
  settle,
  settleAndClaim,
} from '../sql/index.js'
import { wakeWindows } from '../sql/wake.js'
import { wakeSoon, wakesOnWrite } from '../wake/send.js'
import { emptyBatch } from './batch.js'
import { DURATIONS_SAMPLE, DURATIONS_WINDOW_MS } from './budget.js'
import { type Claimed, claimedFrom, tally } from './claimed.js'
import { NetworkShare, networkOf } from './network.js'
import type { StopReason } from './options.js'
import { retrying } from './retry.js'
import type { ClaimPlan, DrainState } from './state.js'

/**
 * The drain's statements: the first claim, each settle-and-claim after it, and the last settle
 * that ends the invocation. Every statement but the first settles what the drain has finished
 * (`state.unsettled`) and counts it into the summary.
 */
export class Claims {
  /** The network's share of a round trip, measured on this client's settle-and-claim statements. */
  readonly network: NetworkShare

  constructor(private readonly s: DrainState) {
    this.network = networkOf(s.db)
  }

  /**
   * The first claim, with what other processes saw the jobs take read with it when this
   * process's copy is stale; the claimed jobs become the drain's rows.
   */
  async first(): Promise<void> {
    const s = this.s
    const opening = s.opening()
    const source = `${s.t} ${s.jobNames.join(' ')}`
    // Not read by a drain that claims once at most (its first claim's size is set before it): a
    // single-job invocation skips the read and its cost on a fresh connection.
    const learn = s.jobNames.length > 0 && s.maxJobs > opening.limit && s.durations.stale(source)
    const { rows } = await s.db.query<ClaimRow & DurationsColumn>(
      claim(
        s.t,
        s.claimParams(opening, true),
        learn ? { names: s.jobNames, sinceMs: DURATIONS_WINDOW_MS, sample: DURATIONS_SAMPLE } : undefined,
      ),
    )
    if (learn && rows.length > 0) s.durations.learn(source, rows[0]!.durations ?? {})
    s.latest = { ...opening, got: claimedFrom(rows) }
    s.rows = s.latest.got.rows
    s.summary.claimed += s.rows.length
  }

  /**
   * Settles what is unsettled and claims up to `next.limit` more, in one statement. When that
   * fails for a passing reason, the settle is sent again alone until it lands, and nothing is
   * claimed (undefined); the jobs the lost statement may have claimed go back when the drain ends.
   */
  async settleThenClaim(next: ClaimPlan): Promise<Claimed | undefined> {
    const s = this.s
    const batch = s.unsettled
    s.unsettled = emptyBatch()
    try {
      const sent = NetworkShare.send()
      const { rows } = await s.db.query<SettleAndClaimRow>(
        settleAndClaim(s.t, batch, s.claimParams(next, false)),
      )
      this.network.record(sent, rows[0]!.server_ms)
      tally(s.summary, batch, rows[0]!)
      s.noteResumed(rows[0]!.resumed, false)
      return { ...claimedFrom(rows), serverMs: rows[0]!.server_ms }
    } catch (error) {
      if (!isTransient(error)) throw error
      s.claimLost = true
      s.retried(error, 0)
      // Sent even when the batch is empty: it also waits, with growing pauses, for the database to answer.
      const { rows } = await retrying(
        () => s.db.query<SettleRow>(settle(s.t, batch)),
        s.settleUntil,
        s.retried,
      )
      tally(s.summary, batch, rows[0]!)
      s.noteResumed(rows[0]!.resumed, false)
      return undefined
    }
  }

  /**
   * After a batch that left no batch claimed ahead: claims the next one now (the drain's rows),
   * or says why the drain stops.
   */
  async again(): Promise<StopReason | undefined> {
    const s = this.s
    for (;;) {
      // The latest claim found fewer jobs than it asked for: the queues had no more it could
      // take, unless it stopped before jobs that did not fit the time left.
      const short = s.latest.got.rows.length < s.latest.limit
      // Unless it said more may remain: it dropped jobs it picked, which this settle may free.
      if (short && !s.latest.got.cut && !s.latest.got.more) return 'empty'
      if (s.summary.claimed >= s.maxJobs) return 'maxJobs'
      const next = s.plan(s.deadline - Date.now())
      // Not even the quickest job of these queues would fit: claim nothing more.
      if (!next) return 'deadline'
      // It stopped before jobs that did not fit; they still do not (the time left only shrinks),
      // unless the batch just run taught their duration.
      if (short && !s.latest.got.more && s.latest.defer.every((name) => next.defer.includes(name)))
        return 'deadline'
      const got = await this.settleThenClaim(next)
      // Lost with its connection (its settle went through alone): plan again with the time left.
      if (!got) continue
      s.latest = { ...next, got }
      s.rows = got.rows
      s.summary.claimed += s.rows.length
      if (s.rows.length > 0) return undefined
      // Every job it picked went to another drain meanwhile: look once more.
      if (!got.more) return got.cut ? 'deadline' : 'empty'
    }
  }

  /**
   * What is left unsettled settles together with the invocation's end, with the jobs a lost
   * claim took, if any.
   */
  async finish(): Promise<void> {
    const s = this.s
    const finish = { invocationId: s.invocationId, queues: s.queues, sweep: s.claimLost }
    const { rows } = await retrying(
      () => s.db.query<SettleRow>(settle(s.t, { ...s.unsettled, finish })),
      s.settleUntil,
      s.retried,
    )
    tally(s.summary, s.unsettled, rows[0]!)
    s.noteResumed(rows[0]!.resumed, true)
    await this.wakeResumed()
  }

  /**
   * Wakes the drains of the queues whose parents this drain's settles made due and that it will not
   * run itself, as an enqueue wakes its queue's (one statement marks their debounce windows). A
   * failed wake-up fails nothing: maintenance wakes a queue with due jobs.
   */
  private async wakeResumed(): Promise<void> {
    const s = this.s
    const wake = s.config.wake
    if (s.resumed.size === 0 || !wakesOnWrite(wake)) return
    try {
      const { rows } = await s.db.query<{ queue: string }>(wakeWindows(s.t, [...s.resumed], wake.debounceMs))
      for (const row of rows) wakeSoon(wake, row.queue)
    } catch {
      // Left to maintenance.
    }
  }
}
