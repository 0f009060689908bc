import {
  type ClaimedRow,
  type ClaimRow,
  READY_CAP,
  type SettleAndClaimRow,
  type SettleRow,
} from '../sql/index.js'
import type { Batch } from './batch.js'
import type { DrainSummary } from './options.js'

/**
 * What a claim returned: the jobs, whether it stopped in a queue before a job that does not fit,
 * and whether a claim made once these jobs settle may find more (ClaimRow's `more`).
 */
export interface Claimed {
  rows: ClaimedRow[]
  cut: boolean
  more: boolean
  /** For a settle-and-claim: the statement's time on the server, ms. */
  serverMs?: number
}

/** A claim sent ahead: what it asked for, its statement, and whether another was in flight with it. */
export interface Ahead {
  plan: { limit: number; defer: string[] }
  claiming: Promise<Claimed | undefined>
  concurrent: boolean
}

/** The latest claim: what it asked for and what it got. */
export interface Latest {
  limit: number
  defer: string[]
  got: Claimed
}

/**
 * The latest claim after `got` arrives for `plan`: that claim alone, or (`join`) that claim and
 * the ones received with it taken as one, as if one claim had asked for all of them.
 */
export function merged(latest: Latest, plan: Ahead['plan'], got: Claimed, join: boolean): Latest {
  if (!join) return { ...plan, got }
  return {
    limit: latest.limit + plan.limit,
    defer: [...new Set([...latest.defer, ...plan.defer])],
    got: {
      rows: [...latest.got.rows, ...got.rows],
      cut: latest.got.cut || got.cut,
      more: latest.got.more || got.more,
    },
  }
}

export function claimedFrom(rows: readonly (ClaimRow | SettleAndClaimRow)[]): Claimed {
  const claimed: ClaimedRow[] = []
  let cut = false
  let more = false
  for (const row of rows) {
    if (row.more) more = true
    if (row.id !== null) claimed.push(row as ClaimedRow)
    // A row with no job but a name: a queue the claim stopped in for lack of time.
    else if (row.name !== null && row.name !== undefined) cut = true
  }
  return { rows: claimed, cut, more }
}

/**
 * Of the queues of the parents a settle made due (`resumed`), those the drain that serves `queues`
 * will not take itself: all of them after its last settle (`final`), else those it does not serve.
 */
export function resumedElsewhere(
  resumed: readonly string[] | null,
  queues: readonly string[],
  final: boolean,
): string[] {
  return (resumed ?? []).filter((queue) => final || !queues.includes(queue))
}

/** Adds what one settle did to the summary. */
export function tally(summary: DrainSummary, batch: Batch, result: SettleRow): void {
  const matched = result.completed + result.retried + result.dead + result.handed_back - (result.swept ?? 0)
  summary.completed += result.completed - batch.expired
  summary.expired += batch.expired
  summary.retried += result.retried
  summary.deadLettered += result.dead
  summary.failed += result.retried + result.dead
  summary.handedBack += result.handed_back
  summary.suspended += batch.suspended
  summary.lostLeases += batch.completions.length + batch.failures.length + batch.handBacks.length - matched
  if (result.ready !== null) summary.remainingReady = Math.min(READY_CAP, result.ready)
}
