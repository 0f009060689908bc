import type { ResolvedConfig } from '../config.js'
import type { Db } from '../db/types.js'
import { DRAIN_RELAY_MIN_MS } from '../events/options.js'
import type { HookRunner } from '../jobs/hooks.js'
import type { ClaimedRow, ClaimParams } from '../sql/index.js'
import { type Batch, type Clock, emptyBatch, type RunJob } from './batch.js'
import { availableMs, type DurationBook, deadlineFrom } from './budget.js'
import { type Latest, resumedElsewhere } from './claimed.js'
import type { DrainOptions, DrainSummary } from './options.js'

/** What the next claim asks for: how many jobs, and the names it must leave in place. */
export interface ClaimPlan {
  limit: number
  defer: string[]
}

/**
 * One drain invocation's settings and the state its phases share: the time budget, what it
 * claims, the summary it answers, the jobs in hand, what is finished but not settled yet, and the
 * latest claim. Each phase is a class over one DrainState: Claims (claim and settle statements),
 * Pipeline (claims sent ahead while a batch runs) and the drain loop (run, then settle).
 */
export class DrainState {
  readonly started = Date.now()
  readonly queues: string[]
  readonly deadline: number
  /**
   * A settle that fails for a passing reason is sent again until the drain's time is up (or its
   * leases, if sooner): its rows are matched on lease tokens, so sending it twice is safe.
   */
  readonly settleUntil: number
  readonly concurrency: number
  readonly batchSize: number
  readonly maxJobs: number
  readonly invocationId: string
  /** The jobs of the drained queues: what the time budget is planned for. */
  readonly jobNames: string[]
  readonly subscribers: string[]
  readonly clock: Clock
  readonly summary: DrainSummary

  /** Finished runs not settled yet: they go with the next statement. */
  unsettled: Batch = emptyBatch()
  /** A statement that claimed failed with its connection: it may have committed, its jobs unknown. */
  claimLost = false
  /**
   * Queues of parents that this drain's settles made due (their last invoked child ended) and that
   * it will not run itself: not among its queues, or made due by its last settle.
   */
  readonly resumed = new Set<string>()
  /** The jobs of the batch about to run. */
  rows: ClaimedRow[] = []
  /** The latest claim: what it asked for and what it got. */
  latest: Latest = { limit: 0, defer: [], got: { rows: [], cut: false, more: false } }

  constructor(
    readonly db: Db,
    readonly t: string,
    readonly config: ResolvedConfig,
    readonly hooks: HookRunner,
    readonly options: DrainOptions,
    readonly durations: DurationBook,
    readonly traced: RunJob | undefined,
  ) {
    this.queues = [...new Set(options.queues ?? config.queues)]
    const time = {
      now: this.started,
      budgetMs: options.budgetMs ?? config.drain.budgetMs,
      platformRemainingMs: options.platformRemainingMs,
      safetyMarginMs: config.drain.safetyMarginMs,
    }
    this.deadline = deadlineFrom(time)
    this.settleUntil = Math.min(this.started + availableMs(time), this.deadline + config.drain.leaseGraceMs)
    this.concurrency = options.concurrency ?? config.drain.concurrency
    this.batchSize = options.batchSize ?? Math.max(config.drain.batchSize, this.concurrency)
    this.maxJobs = options.maxJobs ?? Number.POSITIVE_INFINITY
    this.invocationId = options.invocationId ?? `drn_${crypto.randomUUID()}`
    this.clock = {
      started: this.started,
      deadline: this.deadline,
      ran: 0,
      opening: true,
      signal: this.options.signal,
    }
    this.jobNames = [...config.jobs.values()]
      .filter((job) => this.queues.includes(job.queue))
      .map((job) => job.name)
    this.subscribers = config.subscribers.map((s) => s.name)
    this.summary = {
      invocationId: this.invocationId,
      queues: this.queues,
      claimed: 0,
      completed: 0,
      failed: 0,
      retried: 0,
      deadLettered: 0,
      expired: 0,
      handedBack: 0,
      suspended: 0,
      lostLeases: 0,
      remainingReady: 0,
      stoppedBy: 'empty',
      durationMs: 0,
    }
  }

  /** Stopped already (the caller's signal). */
  get aborted(): boolean {
    return this.options.signal?.aborted === true
  }

  /** How long a job of `name` is expected to run, ms. */
  expected(name: string): number {
    return this.durations.expected(name, this.config.jobs.get(name)?.timeout ?? 0)
  }

  /**
   * The next claim when its jobs will have `availableMs` to run: the names it must leave in place
   * (expected to take longer) and how many jobs it takes; undefined when no job of these queues fits.
   */
  plan(availableMs: number): ClaimPlan | undefined {
    if (availableMs <= 0) return undefined
    const fit = this.jobNames.filter((name) => this.expected(name) <= availableMs)
    if (fit.length === 0 && this.jobNames.length > 0) return undefined
    const defer = this.jobNames.filter((name) => this.expected(name) > availableMs)
    const limit = Math.min(
      this.options.batchSize ?? this.durations.batchSize(fit, this.concurrency, this.batchSize, availableMs),
      this.maxJobs - this.summary.claimed,
    )
    return { limit, defer }
  }

  /**
   * The first claim: no job is left for lack of time (its jobs start with the budget ahead), and
   * its size is planned for the whole budget.
   */
  opening(): ClaimPlan {
    const size =
      this.options.batchSize ??
      this.durations.batchSize(this.jobNames, this.concurrency, this.batchSize, this.deadline - Date.now())
    return { limit: Math.min(size, this.maxJobs), defer: [] }
  }

  /** Keeps the queues of a settle's resumed parents that this drain will not take (resumedElsewhere). */
  noteResumed(resumed: readonly string[] | null, final: boolean): void {
    for (const queue of resumedElsewhere(resumed, this.queues, final)) this.resumed.add(queue)
  }

  /** The claim statement's parameters; the first claim also relays pending outbox entries, when the budget allows. */
  claimParams(plan: ClaimPlan, first: boolean): ClaimParams {
    const relay = this.deadline - Date.now() >= DRAIN_RELAY_MIN_MS ? this.config.events.drainRelayLimit : 0
    return {
      queues: this.queues,
      limit: plan.limit,
      leaseMs: Math.max(0, this.deadline - Date.now()) + this.config.drain.leaseGraceMs,
      invocationId: this.invocationId,
      invocationPriority: this.options.priority ?? 0,
      jobsDone: this.summary.claimed,
      subscribers: this.subscribers,
      defer: plan.defer,
      ...(first ? { relay } : {}),
    }
  }

  /** Logs a settle sent again after a passing failure. */
  readonly retried = (error: unknown, delayMs: number): void => {
    const reason = error instanceof Error ? error.message : String(error)
    this.config.logger.warn(
      `sluice: settling a drained batch failed (${reason}); sending it again in ${delayMs} ms`,
    )
  }
}
