import * as z from 'zod'
import type { ResolvedConfig } from '../config.js'
import type { Db } from '../db/types.js'
import { toIssues, ValidationError } from '../errors.js'
import { DRAIN_RELAY_MIN_MS } from '../events/options.js'
import { subscriberRuntime } from '../events/runtime.js'
import type { SubscriberRuntime } from '../events/subscriber.js'
import type { HookRunner } from '../jobs/hooks.js'
import { nameSchema } from '../names.js'
import {
  type ClaimedRow,
  type ClaimParams,
  type Completion,
  claim,
  type Failure,
  type HandBack,
  READY_CAP,
  type SettleAndClaimRow,
  type SettleRow,
  settle,
  settleAndClaim,
} from '../sql/index.js'
import { type DurationBook, deadlineFrom, observedDurations } from './budget.js'
import { execute, type Outcome } from './execute.js'

export const drainOptionsSchema = z
  .object({
    queues: z.array(nameSchema).min(1).max(100).optional(),
    budgetMs: z.number().int().positive().max(3_600_000).optional(),
    maxJobs: z.number().int().positive().max(1_000_000).optional(),
    concurrency: z.number().int().min(1).max(1000).optional(),
    batchSize: z.number().int().min(1).max(10_000).optional(),
    /** What the platform says is left (Lambda's getRemainingTimeInMillis()); caps the budget. */
    platformRemainingMs: z.number().min(0).optional(),
    /** Higher-priority drains are preferred by later admission features; recorded on the invocation. */
    priority: z.number().int().min(-1000).max(1000).optional(),
    onJob: z.custom<(run: JobRun) => void>((v) => typeof v === 'function', 'must be a function').optional(),
  })
  .strict()

/** One job run by a drain, as `onJob` sees it once the run has ended (the batch settles afterwards). */
export interface JobRun {
  id: string
  name: string
  queue: string
  /** 1 on the first run. */
  attempt: number
  maxAttempts: number
  /** `retrying` and `dead-lettered` are failures; `expired` jobs waited past their queueTimeout and did not run. */
  outcome: 'completed' | 'expired' | 'retrying' | 'dead-lettered'
  durationMs: number
  error?: { name: string; message: string }
  /** Backoff before the next attempt, for `retrying`. */
  retryInMs?: number
}

export type DrainOptions = z.input<typeof drainOptionsSchema> & {
  /** Called after each job this drain runs (for logging); errors it throws go to onFatalError. */
  onJob?: (run: JobRun) => void
}

export type StopReason = 'empty' | 'deadline' | 'maxJobs'

export interface DrainSummary {
  invocationId: string
  queues: string[]
  claimed: number
  completed: number
  /** Runs that threw or timed out: retried + deadLettered. */
  failed: number
  retried: number
  deadLettered: number
  expired: number
  /** Claimed but not started before the deadline: back in the queue, attempt not counted. */
  handedBack: number
  /** Settles that matched no lease any more (another drain had re-claimed the job). */
  lostLeases: number
  /** Due jobs left in the drained queues, counted up to 1,000. */
  remainingReady: number
  stoppedBy: StopReason
  durationMs: number
}

interface Batch {
  completions: Completion[]
  failures: Failure[]
  handBacks: HandBack[]
  expired: number
}

interface Clock {
  started: number
  deadline: number
  /** Jobs started so far by this drain. */
  ran: number
}

/** Whether a job may start now: its expected duration must fit before the deadline. */
function mayStart(expected: number, clock: Clock): boolean {
  return Date.now() + expected <= clock.deadline
}

/**
 * The batch as units of work: each job of an ordinary queue alone; all jobs of one
 * single-consumer queue as one chain, run one after another in claim order.
 */
function units(rows: readonly ClaimedRow[]): ClaimedRow[][] {
  const chains = new Map<string, ClaimedRow[]>()
  const out: ClaimedRow[][] = []
  for (const row of rows) {
    if (!row.single_consumer) {
      out.push([row])
      continue
    }
    let chain = chains.get(row.queue)
    if (!chain) {
      chain = []
      chains.set(row.queue, chain)
      out.push(chain)
    }
    chain.push(row)
  }
  return out
}

function report(
  onJob: ((run: JobRun) => void) | undefined,
  hooks: HookRunner,
  row: ClaimedRow,
  outcome: Outcome,
  durationMs: number,
): void {
  if (!onJob) return
  const run: JobRun = {
    id: row.id,
    name: row.name,
    queue: row.queue,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    outcome:
      outcome.kind === 'failed'
        ? outcome.willRetry
          ? 'retrying'
          : 'dead-lettered'
        : outcome.kind === 'expired'
          ? 'expired'
          : 'completed',
    durationMs,
    ...(outcome.kind === 'failed' ? { error: outcome.failure.error } : {}),
    ...(outcome.kind === 'failed' && outcome.willRetry ? { retryInMs: outcome.failure.delayMs } : {}),
  }
  try {
    onJob(run)
  } catch (error) {
    hooks.fatal(error, { phase: 'drain', job: row.name })
  }
}

async function runBatch(
  rows: ClaimedRow[],
  config: ResolvedConfig,
  hooks: HookRunner,
  clock: Clock,
  concurrency: number,
  durations: DurationBook,
  onJob: ((run: JobRun) => void) | undefined,
  runtime: SubscriberRuntime,
): Promise<Batch> {
  const deadline = clock.deadline
  const batch = emptyBatch()
  const work = units(rows)
  const warned = new Set<string>()
  let next = 0
  let outOfTime = false
  const handBack = (row: ClaimedRow): void => {
    batch.handBacks.push(handBackOf(row))
  }
  /** Runs one job; false when it did not start or failed (a chain stops there to keep its order). */
  const run = async (row: ClaimedRow): Promise<boolean> => {
    const job = config.jobs.get(row.name)
    if (job && !outOfTime && job.timeout > clock.deadline - clock.started && !warned.has(job.name)) {
      warned.add(job.name)
      config.logger.warn(
        `sluice: job "${job.name}" has a ${job.timeout} ms timeout, longer than this drain's ${clock.deadline - clock.started} ms budget; ` +
          'until a drain has seen it run, it only starts in a drain with a longer budget',
      )
    }
    if (outOfTime || (job && !mayStart(durations.expected(job.name, job.timeout), clock))) {
      // Jobs are taken in priority order, so once one does not fit the rest wait for the next drain.
      outOfTime = true
      handBack(row)
      return false
    }
    clock.ran++
    const started = Date.now()
    const outcome = await execute(row, job, { hooks, deadline, runtime })
    report(onJob, hooks, row, outcome, Date.now() - started)
    if (outcome.kind === 'failed') {
      batch.failures.push(outcome.failure)
      return false
    }
    batch.completions.push(outcome.completion)
    if (outcome.kind === 'expired') batch.expired++
    else if (outcome.completion.durationMs !== null) durations.record(row.name, outcome.completion.durationMs)
    return true
  }
  const worker = async (): Promise<void> => {
    while (next < work.length) {
      const chain = work[next++]!
      let i = 0
      while (i < chain.length && (await run(chain[i]!))) i++
      // The rest of a stopped chain goes back untouched, in order.
      for (const row of chain.slice(i + 1)) handBack(row)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, work.length) }, worker))
  return batch
}

const byQueueOrder = (a: ClaimedRow, b: ClaimedRow): number =>
  a.priority - b.priority || a.due_at.getTime() - b.due_at.getTime() || (BigInt(a.id) < BigInt(b.id) ? -1 : 1)

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
  const invocationId = `drn_${crypto.randomUUID()}`
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
  if (deadline <= started) {
    summary.stoppedBy = 'deadline'
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
  /** Settles what is unsettled and claims up to `limit` more, in one statement. */
  const settleThenClaim = async (batch: Batch, limit: number): Promise<ClaimedRow[]> => {
    const { rows } = await db.query<SettleAndClaimRow>(settleAndClaim(t, batch, claimParams(limit, false)))
    tally(summary, batch, rows[0]!)
    const claimed = rows.filter((row): row is SettleRow & ClaimedRow => row.id !== null)
    summary.claimed += claimed.length
    return claimed
  }

  let limit = sizeNext(0)
  let rows: ClaimedRow[] = (await db.query<ClaimedRow>(claim(t, claimParams(limit, true)))).rows
  summary.claimed += rows.length
  /** Finished runs not settled yet: they go with the next statement. */
  let unsettled = emptyBatch()
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
    const busyMs: number = durations.batchMs(rows, config.jobs, concurrency)
    const ahead: boolean =
      !last &&
      healthy &&
      summary.claimed < maxJobs &&
      !rows.some((row) => row.single_consumer) &&
      deadline - Date.now() - busyMs >= durations.fastest(jobNames)
    const aheadLimit = ahead ? sizeNext(busyMs) : 0
    const sending = unsettled
    if (ahead) unsettled = emptyBatch()
    const claiming = ahead ? settleThenClaim(sending, aheadLimit) : Promise.resolve(undefined)
    // Drivers hand the statement to the socket on a later tick; a batch of quick handlers runs
    // in microtasks and would otherwise finish before the statement even leaves.
    if (ahead) await nextTurn()
    const [ran, claimed] = await Promise.allSettled([
      runBatch(rows, config, hooks, clock, concurrency, durations, options.onJob, runtime),
      claiming,
    ])
    if (claimed.status === 'rejected') throw claimed.reason
    if (ran.status === 'rejected') throw ran.reason
    const done: Batch = ran.value
    const next: ClaimedRow[] | undefined = claimed.value
    absorb(unsettled, done)
    healthy = done.failures.length === 0
    if (done.handBacks.length > 0 || deadline - Date.now() <= 0) {
      stop = 'deadline'
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
      const batch = unsettled
      unsettled = emptyBatch()
      rows = await settleThenClaim(batch, limit)
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

const emptyBatch = (): Batch => ({ completions: [], failures: [], handBacks: [], expired: 0 })

function absorb(into: Batch, from: Batch): void {
  into.completions.push(...from.completions)
  into.failures.push(...from.failures)
  into.handBacks.push(...from.handBacks)
  into.expired += from.expired
}

const handBackOf = (row: ClaimedRow): HandBack => ({ id: row.id, token: row.token, dueAt: row.due_at })

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

/** Resolves on a later turn of the event loop, once pending I/O (an outgoing statement) has gone. */
const nextTurn = (): Promise<void> =>
  new Promise((resolve) =>
    typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0),
  )
