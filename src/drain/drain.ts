import type { ResolvedConfig } from '../config.js'
import { isTransient } from '../db/errors.js'
import type { Db } from '../db/types.js'
import { toIssues, ValidationError } from '../errors.js'
import { DRAIN_RELAY_MIN_MS } from '../events/options.js'
import { subscriberRuntime } from '../events/runtime.js'
import type { HookRunner } from '../jobs/hooks.js'
import {
  type ClaimParams,
  type ClaimRow,
  claim,
  type DurationsColumn,
  type SettleAndClaimRow,
  type SettleRow,
  settle,
  settleAndClaim,
} from '../sql/index.js'
import {
  absorb,
  type Batch,
  byQueueOrder,
  type Clock,
  emptyBatch,
  handBackOf,
  type RunJob,
  runBatch,
} from './batch.js'
import {
  availableMs,
  DURATIONS_SAMPLE,
  DURATIONS_WINDOW_MS,
  type DurationBook,
  deadlineFrom,
  observedDurations,
} from './budget.js'
import { type Ahead, type Claimed, claimedFrom, type Latest, merged, tally } from './claimed.js'
import { NetworkShare, networkOf } from './network.js'
import { type DrainOptions, type DrainSummary, drainOptionsSchema, type StopReason } from './options.js'
import { retrying } from './retry.js'

/**
 * One drain invocation: claim a batch, run it with bounded concurrency inside the time
 * budget, repeat until the queues are empty, the deadline is near or maxJobs is reached.
 * Each batch costs one statement: the settle of the batch before it together with the
 * claim of the next, sent while the batch runs when it may (see the loop). One more
 * statement at the end settles the rest and ends the invocation.
 *
 * A drain claims only jobs it expects to start: each claim names the jobs whose expected
 * duration does not fit the time left, and the claim stops before them (see the claim
 * function). The first claim names none: its jobs start at once, with the whole budget
 * ahead, even one longer than the budget (its signal fires at the deadline), so that no job
 * waits forever for a drain longer than any the platform gives.
 */
export async function drain(
  db: Db,
  t: string,
  config: ResolvedConfig,
  hooks: HookRunner,
  input: DrainOptions = {},
  durations: DurationBook = observedDurations,
  traced?: RunJob,
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
  const time = {
    now: started,
    budgetMs: options.budgetMs ?? config.drain.budgetMs,
    platformRemainingMs: options.platformRemainingMs,
    safetyMarginMs: config.drain.safetyMarginMs,
  }
  const deadline = deadlineFrom(time)
  // A settle that fails for a passing reason is sent again until the drain's time is up (or its
  // leases, if sooner): its rows are matched on lease tokens, so sending it twice is safe.
  const settleUntil = Math.min(started + availableMs(time), deadline + config.drain.leaseGraceMs)
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

  const clock: Clock = { started, deadline, ran: 0, opening: true }
  const jobNames = [...config.jobs.values()]
    .filter((job) => queues.includes(job.queue))
    .map((job) => job.name)
  const runtime = subscriberRuntime(db, t)
  const subscribers = config.subscribers.map((s) => s.name)
  // No time at all (the platform has none left), or stopped already: claim nothing.
  if (deadline <= started || options.signal?.aborted) {
    summary.stoppedBy = options.signal?.aborted ? 'stopped' : 'deadline'
    summary.durationMs = Date.now() - started
    return summary
  }
  // Pending outbox entries are relayed by the first claim, when the budget allows it.
  const relay = deadline - Date.now() >= DRAIN_RELAY_MIN_MS ? config.events.drainRelayLimit : 0
  const expected = (name: string): number => durations.expected(name, config.jobs.get(name)?.timeout ?? 0)
  /**
   * The next claim when its jobs will have `availableMs` to run: the names it must leave in place
   * (expected to take longer) and how many jobs it takes; undefined when no job of these queues fits.
   */
  const plan = (availableMs: number): { limit: number; defer: string[] } | undefined => {
    if (availableMs <= 0) return undefined
    const fit = jobNames.filter((name) => expected(name) <= availableMs)
    if (fit.length === 0 && jobNames.length > 0) return undefined
    const defer = jobNames.filter((name) => expected(name) > availableMs)
    const limit = Math.min(
      options.batchSize ?? durations.batchSize(fit, concurrency, batchSize, availableMs),
      maxJobs - summary.claimed,
    )
    return { limit, defer }
  }
  const claimParams = (limit: number, defer: string[], first: boolean): ClaimParams => ({
    queues,
    limit,
    leaseMs: Math.max(0, deadline - Date.now()) + config.drain.leaseGraceMs,
    invocationId,
    invocationPriority: options.priority ?? 0,
    jobsDone: summary.claimed,
    subscribers,
    defer,
    ...(first ? { relay } : {}),
  })
  /** The network's share of a round trip, measured on this client's settle-and-claim statements. */
  const network = networkOf(db)
  /** Finished runs not settled yet: they go with the next statement. */
  let unsettled = emptyBatch()
  /** A statement that claimed failed with its connection: it may have committed, its jobs unknown. */
  let claimLost = false
  const retried = (error: unknown, delayMs: number): void => {
    const reason = error instanceof Error ? error.message : String(error)
    config.logger.warn(
      `sluice: settling a drained batch failed (${reason}); sending it again in ${delayMs} ms`,
    )
  }
  /**
   * Settles what is unsettled and claims up to `limit` more, in one statement. When that fails
   * for a passing reason, the settle is sent again alone until it lands, and nothing is claimed
   * (undefined); the jobs the lost statement may have claimed go back when the drain ends.
   */
  const settleThenClaim = async (next: { limit: number; defer: string[] }): Promise<Claimed | undefined> => {
    const batch = unsettled
    unsettled = emptyBatch()
    try {
      const sent = NetworkShare.send()
      const { rows } = await db.query<SettleAndClaimRow>(
        settleAndClaim(t, batch, claimParams(next.limit, next.defer, false)),
      )
      network.record(sent, rows[0]!.server_ms)
      tally(summary, batch, rows[0]!)
      return { ...claimedFrom(rows), serverMs: rows[0]!.server_ms }
    } catch (error) {
      if (!isTransient(error)) throw error
      claimLost = true
      retried(error, 0)
      // Sent even when the batch is empty: it also waits, with growing pauses, for the database to answer.
      const { rows } = await retrying(() => db.query<SettleRow>(settle(t, batch)), settleUntil, retried)
      tally(summary, batch, rows[0]!)
      return undefined
    }
  }

  // The first claim: no job is left for lack of time (its jobs start with the budget ahead), and
  // what other processes saw the jobs take is read with it, when this process's copy is stale.
  const opening = {
    limit: Math.min(
      options.batchSize ?? durations.batchSize(jobNames, concurrency, batchSize, deadline - Date.now()),
      maxJobs,
    ),
    defer: [] as string[],
  }
  const source = `${t} ${jobNames.join(' ')}`
  // Not read by a drain that claims once at most (its first claim's size is set before it): a
  // single-job invocation skips the read and its cost on a fresh connection.
  const learn = jobNames.length > 0 && maxJobs > opening.limit && durations.stale(source)
  const { rows: firstRows } = await db.query<ClaimRow & DurationsColumn>(
    claim(
      t,
      claimParams(opening.limit, opening.defer, true),
      learn ? { names: jobNames, sinceMs: DURATIONS_WINDOW_MS, sample: DURATIONS_SAMPLE } : undefined,
    ),
  )
  if (learn && firstRows.length > 0) durations.learn(source, firstRows[0]!.durations ?? {})
  let latest: Latest = { ...opening, got: claimedFrom(firstRows) }
  let rows = latest.got.rows
  summary.claimed += rows.length
  let healthy = true

  /** After a batch that left no batch claimed ahead: claims the next one now, or says why not. */
  const claimAgain = async (): Promise<StopReason | undefined> => {
    for (;;) {
      // The latest claim found fewer jobs than it asked for: the queues had no more it could
      // take, unless it stopped before jobs that did not fit the time left.
      const short = latest.got.rows.length < latest.limit
      // Unless it said more may remain: it dropped jobs it picked, which this settle may free.
      if (short && !latest.got.cut && !latest.got.more) return 'empty'
      if (summary.claimed >= maxJobs) return 'maxJobs'
      const next = plan(deadline - Date.now())
      // Not even the quickest job of these queues would fit: claim nothing more.
      if (!next) return 'deadline'
      // It stopped before jobs that did not fit; they still do not (the time left only shrinks),
      // unless the batch just run taught their duration.
      if (short && !latest.got.more && latest.defer.every((name) => next.defer.includes(name)))
        return 'deadline'
      const got = await settleThenClaim(next)
      // Lost with its connection (its settle went through alone): plan again with the time left.
      if (!got) continue
      latest = { ...next, got }
      rows = got.rows
      summary.claimed += rows.length
      if (rows.length > 0) return undefined
      // Every job it picked went to another drain meanwhile: look once more.
      if (!got.more) return got.cut ? 'deadline' : 'empty'
    }
  }

  // Single-consumer queues run their jobs in claim order: two claims of one drain in flight at
  // once could both take from one, so such a drain keeps one claim ahead at most.
  const ordered = config.queueSettings.some((q) => q.singleConsumer && queues.includes(q.name))
  let depth = ordered ? 1 : (options.pipeline ?? config.drain.pipeline)
  /** Claims sent ahead, oldest first: each settles what had finished when it was sent. */
  const pending: Ahead[] = []
  /**
   * The latest settle-and-claim statement: its time on the server and the rest of its round trip
   * (the network, the driver, the pool), ms.
   */
  let serverMs = 0
  /** How long the latest batch took to run, ms. */
  let ranMs = 0
  const sendAhead = (next: { limit: number; defer: string[] }): void => {
    // Claims in flight together may run on the server in either order.
    const concurrent = pending.length > 0
    for (const p of pending) p.concurrent = true
    const claiming = settleThenClaim(next).then((got) => {
      if (got?.serverMs !== undefined) serverMs = got.serverMs
      return got
    })
    // It may fail before it is awaited: its error is read then, and must not count as an
    // unhandled rejection meanwhile (that ends a Node process).
    claiming.catch(() => {})
    pending.push({ plan: next, claiming, concurrent })
  }
  /**
   * The oldest claim sent ahead, awaited: its jobs, or none when it was lost with its connection
   * or found nothing. Claims that were in flight together may have been filled by the server in
   * either order, so the jobs of every claim in flight with it are awaited too and returned as one
   * batch in claim order. Jobs to run in order that such a claim took go back (another claim of
   * this drain may hold their queue's earlier jobs), and from then on the drain keeps one claim in
   * flight.
   */
  const receive = async (): Promise<Claimed | undefined> => {
    const head = pending.shift()
    if (!head) return undefined
    const together = head.concurrent ? [head, ...pending.splice(0)] : [head]
    let got: Claimed | undefined
    for (const ahead of together) {
      const one = await ahead.claiming
      if (!one) continue
      summary.claimed += one.rows.length
      latest = merged(latest, ahead.plan, one, got !== undefined)
      got = latest.got
    }
    if (!got) return undefined
    if (together.length > 1) got.rows.sort(byQueueOrder)
    if (!got.rows.some((row) => row.in_order)) return got
    depth = 1
    if (!head.concurrent) return got
    for (const row of got.rows) if (row.in_order) unsettled.handBacks.push(handBackOf(row))
    return { ...got, rows: got.rows.filter((row) => !row.in_order) }
  }
  /** Every claim still in flight, awaited; their jobs go back in place unstarted. */
  const handBackPending = async (): Promise<void> => {
    while (pending.length > 0) {
      const got = await receive()
      for (const row of got?.rows ?? []) unsettled.handBacks.push(handBackOf(row))
    }
  }

  let stop: StopReason | undefined =
    rows.length > 0 ? undefined : latest.got.more ? await claimAgain() : 'empty'
  while (!stop) {
    rows.sort(byQueueOrder)
    // Claim the next batches while this one runs (each statement with the settle of the batches
    // finished before it was sent), unless this batch must settle first: the claim marked jobs
    // `in_order` (a failure keeps its place, so nothing after it may be claimed before that is
    // recorded); or the batch had failures, whose settle may change what the next claim may take
    // (a circuit breaker tripping). Not when the queues had no more to give. Jobs claimed ahead
    // start once the batches before them are done: they must fit the time those are expected to
    // leave. A second claim goes out only while the network's share of a round trip is longer
    // than a batch's run and the statement's time on the server together: what one claim ahead
    // cannot hide. Claims in flight at once over a near database only make the server's work
    // contend (claims skipping each other's locked rows), so there the pipeline stays at one.
    const batchMs = durations.batchMs(rows, config.jobs, concurrency)
    const want = Math.min(depth, 1 + Math.floor(network.ms / Math.max(1, ranMs + serverMs)))
    while (
      pending.length < want &&
      rows.length >= latest.limit &&
      healthy &&
      !options.signal?.aborted &&
      !rows.some((row) => row.in_order)
    ) {
      const inFlight = pending.reduce((n, p) => n + p.plan.limit, 0)
      if (summary.claimed + inFlight >= maxJobs) break
      const next = plan(deadline - Date.now() - batchMs * (pending.length + 1))
      if (!next) break
      next.limit = Math.min(next.limit, maxJobs - summary.claimed - inFlight)
      sendAhead(next)
    }
    // Drivers hand the statement to the socket on a later tick; a batch of quick handlers runs
    // in microtasks and would otherwise finish before the statement even leaves.
    if (pending.length > 0) await new Promise((resolve) => setImmediate(resolve))
    const running = performance.now()
    const done: Batch = await runBatch(
      rows,
      config,
      hooks,
      clock,
      concurrency,
      durations,
      options.onJob,
      runtime,
      traced,
    )
    ranMs = performance.now() - running
    absorb(unsettled, done)
    healthy = done.failures.length === 0
    if (done.handBacks.length > 0 || deadline - Date.now() <= 0 || options.signal?.aborted) {
      stop = options.signal?.aborted ? 'stopped' : 'deadline'
      // Claimed ahead but never started: back in place with the rest.
      await handBackPending()
      break
    }
    let next: Claimed | undefined
    while (pending.length > 0 && !next?.rows.length) next = await receive()
    if (next && next.rows.length > 0) rows = next.rows
    else stop = await claimAgain()
  }
  // What is left unsettled settles together with the invocation's end, with the jobs a lost
  // claim took, if any.
  const finish = { invocationId, queues, sweep: claimLost }
  const { rows: end } = await retrying(
    () => db.query<SettleRow>(settle(t, { ...unsettled, finish })),
    settleUntil,
    retried,
  )
  tally(summary, unsettled, end[0]!)
  summary.stoppedBy = stop
  summary.durationMs = Date.now() - started
  return summary
}
