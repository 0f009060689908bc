import type { ResolvedConfig } from '../config.js'
import type { Db } from '../db/types.js'
import { toIssues, ValidationError } from '../errors.js'
import { DRAIN_RELAY_MIN_MS } from '../events/options.js'
import { subscriberRuntime } from '../events/runtime.js'
import type { HookRunner } from '../jobs/hooks.js'
import {
  type ClaimedRow,
  type ClaimParams,
  claim,
  READY_CAP,
  type SettleAndClaimRow,
  type SettleRow,
  settle,
  settleAndClaim,
} from '../sql/index.js'
import { absorb, type Batch, byQueueOrder, type Clock, emptyBatch, handBackOf, runBatch } from './batch.js'
import { type DurationBook, deadlineFrom, observedDurations } from './budget.js'
import { type DrainOptions, type DrainSummary, drainOptionsSchema, type StopReason } from './options.js'

/**
 * One drain invocation: claim a batch, run it with bounded concurrency inside the time
 * budget, repeat until the queues are empty, the deadline is near or maxJobs is reached.
 * Each batch costs one statement: the settle of the batch before it together with the
 * claim of the next, sent while the batch runs when it may (see the loop). One more
 * statement at the end settles the rest and ends the invocation.
 */
export async function drain(
  db: Db,
  t: string,
  config: ResolvedConfig,
  hooks: HookRunner,
  input: DrainOptions = {},
  durations: DurationBook = observedDurations,
): Promise<DrainSummary> {
  const parsed = drainOptionsSchema.safeParse(input)
  if (!parsed.success) {
    throw new ValidationError(
      `Invalid drain options: ${parsed.error.issues[0]?.message}`,
      toIssues(parsed.error.issues),
    )
  }
  const options = parsed.data
  const started = Date.now()
  const queues = [...new Set(options.queues ?? config.queues)]
  const deadline = deadlineFrom({
    now: started,
    budgetMs: options.budgetMs ?? config.drain.budgetMs,
    platformRemainingMs: options.platformRemainingMs,
    safetyMarginMs: config.drain.safetyMarginMs,
  })
  const concurrency = options.concurrency ?? config.drain.concurrency
  const batchSize = options.batchSize ?? Math.max(config.drain.batchSize, concurrency)
  const maxJobs = options.maxJobs ?? Number.POSITIVE_INFINITY
  const invocationId = options.invocationId ?? `drn_${crypto.randomUUID()}`
  const summary: DrainSummary = {
    invocationId,
    queues,
    claimed: 0,
    completed: 0,
    failed: 0,
    retried: 0,
    deadLettered: 0,
    expired: 0,
    handedBack: 0,
    lostLeases: 0,
    remainingReady: 0,
    stoppedBy: 'empty',
    durationMs: 0,
  }
  if (queues.length === 0) {
    summary.durationMs = Date.now() - started
    return summary
  }

  const clock: Clock = { started, deadline, ran: 0 }
  const jobNames = [...config.jobs.values()]
    .filter((job) => queues.includes(job.queue))
    .map((job) => job.name)
  const runtime = subscriberRuntime(db, t)
  const subscribers = config.subscribers.map((s) => s.name)
  // No time at all (the platform's remaining time is inside the safety margin): claim nothing.
  if (deadline <= started || options.signal?.aborted) {
    summary.stoppedBy = options.signal?.aborted ? 'stopped' : 'deadline'
    summary.durationMs = Date.now() - started
    return summary
  }
  // Pending outbox entries are relayed by the first claim, when the budget allows it.
  const relay = deadline - Date.now() >= DRAIN_RELAY_MIN_MS ? config.events.drainRelayLimit : 0
  /** Jobs the next claim takes, when the batch running now is expected to need `busyMs` more. */
  const sizeNext = (busyMs: number): number =>
    Math.min(
      options.batchSize ??
        durations.batchSize(jobNames, concurrency, batchSize, deadline - Date.now() - busyMs),
      maxJobs - summary.claimed,
    )
  const claimParams = (limit: number, first: boolean): ClaimParams => ({
    queues,
    limit,
    leaseMs: Math.max(0, deadline - Date.now()) + config.drain.leaseGraceMs,
    invocationId,
    invocationPriority: options.priority ?? 0,
    jobsDone: summary.claimed,
    subscribers,
    ...(first ? { relay } : {}),
  })
  /** Finished runs not settled yet: they go with the next statement. */
  let unsettled = emptyBatch()
  /** Settles what is unsettled and claims up to `limit` more, in one statement. */
  const settleThenClaim = async (limit: number): Promise<ClaimedRow[]> => {
    const batch = unsettled
    unsettled = emptyBatch()
    const { rows } = await db.query<SettleAndClaimRow>(settleAndClaim(t, batch, claimParams(limit, false)))
    tally(summary, batch, rows[0]!)
    const claimed = rows.filter((row): row is SettleRow & ClaimedRow => row.id !== null)
    summary.claimed += claimed.length
    return claimed
  }

  let limit = sizeNext(0)
  let rows: ClaimedRow[] = (await db.query<ClaimedRow>(claim(t, claimParams(limit, true)))).rows
  summary.claimed += rows.length
  let stop: StopReason | undefined = rows.length === 0 ? 'empty' : undefined
  let healthy = true
  while (!stop) {
    rows.sort(byQueueOrder)
    // The queues had fewer due jobs than asked for: this is the last batch.
    const last = rows.length < limit
    // Claim the next batch while this one runs (with the previous batch's settle, in one
    // statement), unless this batch must settle first: a single-consumer queue's failure keeps
    // its place, so nothing after it may be claimed before that is recorded; and after a batch
    // with failures, whose settle may trip a circuit breaker the next claim has to see.
    const busyMs = durations.batchMs(rows, config.jobs, concurrency)
    const ahead: boolean =
      !last &&
      healthy &&
      !options.signal?.aborted &&
      summary.claimed < maxJobs &&
      !rows.some((row) => row.single_consumer) &&
      deadline - Date.now() - busyMs >= durations.fastest(jobNames)
    const aheadLimit = ahead ? sizeNext(busyMs) : 0
    const claiming: Promise<ClaimedRow[]> | undefined = ahead ? settleThenClaim(aheadLimit) : undefined
    // Drivers hand the statement to the socket on a later tick; a batch of quick handlers runs
    // in microtasks and would otherwise finish before the statement even leaves.
    if (claiming) await new Promise((resolve) => setImmediate(resolve))
    const [ran, claimed] = await Promise.allSettled([
      runBatch(rows, config, hooks, clock, concurrency, durations, options.onJob, runtime),
      claiming,
    ])
    if (claimed.status === 'rejected') throw claimed.reason
    if (ran.status === 'rejected') throw ran.reason
    const done: Batch = ran.value
    const next = claimed.value
    absorb(unsettled, done)
    healthy = done.failures.length === 0
    if (done.handBacks.length > 0 || deadline - Date.now() <= 0 || options.signal?.aborted) {
      stop = options.signal?.aborted ? 'stopped' : 'deadline'
      // Claimed ahead but never started: back in place with the rest.
      for (const row of next ?? []) unsettled.handBacks.push(handBackOf(row))
    } else if (next !== undefined) {
      if (next.length === 0) stop = 'empty'
      limit = aheadLimit
      rows = next
    } else if (last) stop = 'empty'
    else if (summary.claimed >= maxJobs) stop = 'maxJobs'
    // Not even the quickest job of these queues would fit: claim nothing more.
    else if (deadline - Date.now() < durations.fastest(jobNames)) stop = 'deadline'
    else {
      limit = sizeNext(0)
      rows = await settleThenClaim(limit)
      if (rows.length === 0) stop = 'empty'
    }
  }
  // What is left unsettled settles together with the invocation's end.
  const { rows: end } = await db.query<SettleRow>(
    settle(t, { ...unsettled, finish: { invocationId, queues } }),
  )
  tally(summary, unsettled, end[0]!)
  summary.stoppedBy = stop
  summary.durationMs = Date.now() - started
  return summary
}

/** Adds what one settle did to the summary. */
function tally(summary: DrainSummary, batch: Batch, result: SettleRow): void {
  const matched = result.completed + result.retried + result.dead + result.handed_back
  summary.completed += result.completed - batch.expired
  summary.expired += batch.expired
  summary.retried += result.retried
  summary.deadLettered += result.dead
  summary.failed += result.retried + result.dead
  summary.handedBack += result.handed_back
  summary.lostLeases += batch.completions.length + batch.failures.length + batch.handBacks.length - matched
  if (result.ready !== null) summary.remainingReady = Math.min(READY_CAP, result.ready)
}
