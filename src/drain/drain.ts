import type { ResolvedConfig } from '../config.js'
import type { Db } from '../db/types.js'
import { toIssues, ValidationError } from '../errors.js'
import { subscriberRuntime } from '../events/runtime.js'
import type { HookRunner } from '../jobs/hooks.js'
import { absorb, type Batch, byQueueOrder, type RunJob, runBatch } from './batch.js'
import { type DurationBook, observedDurations } from './budget.js'
import { Claims } from './claims.js'
import type { DrainRuntime } from './execute.js'
import { type DrainOptions, type DrainSummary, drainOptionsSchema, type StopReason } from './options.js'
import { Pipeline } from './pipeline.js'
import { DrainState } from './state.js'

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
  return new Drain(new DrainState(db, t, config, hooks, parsed.data, durations, traced)).run()
}

/**
 * The drain's phases over one DrainState: claim (Claims: the first claim, then each
 * settle-and-claim), claim ahead (Pipeline), run a batch, and at the end hand back what was
 * claimed but not started and settle the rest with the invocation's end.
 */
class Drain {
  private readonly claims: Claims
  private readonly pipeline: Pipeline
  private readonly runtime: DrainRuntime
  /** How long the latest batch took to run, ms. */
  private ranMs = 0
  /** The latest batch had no failure. */
  private healthy = true

  constructor(private readonly s: DrainState) {
    this.claims = new Claims(s)
    this.pipeline = new Pipeline(s, this.claims)
    this.runtime = {
      ...subscriberRuntime(s.db, s.t),
      steps: {
        db: s.db,
        t: s.t,
        jobs: s.config.jobs,
        maxPayloadBytes: s.config.maxPayloadBytes,
        wake: s.config.wake,
      },
    }
  }

  async run(): Promise<DrainSummary> {
    const s = this.s
    // No queue, no time at all (the platform has none left), or stopped already: claim nothing.
    if (s.queues.length === 0) return this.answer('empty')
    if (s.deadline <= s.started || s.aborted) return this.answer(s.aborted ? 'stopped' : 'deadline')
    await this.claims.first()
    let stop: StopReason | undefined =
      s.rows.length > 0 ? undefined : s.latest.got.more ? await this.claims.again() : 'empty'
    while (!stop) stop = await this.step()
    await this.claims.finish()
    return this.answer(stop)
  }

  /** Runs the batch in hand, with the next ones claimed meanwhile; then takes the next, or says why it stops. */
  private async step(): Promise<StopReason | undefined> {
    const s = this.s
    s.rows.sort(byQueueOrder)
    this.pipeline.fill(s.durations.batchMs(s.rows, s.config.jobs, s.concurrency), this.ranMs, this.healthy)
    // Drivers hand the statement to the socket on a later tick; a batch of quick handlers runs
    // in microtasks and would otherwise finish before the statement even leaves.
    if (this.pipeline.inFlight > 0) await new Promise((resolve) => setImmediate(resolve))
    const done = await this.runBatch()
    absorb(s.unsettled, done)
    this.healthy = done.failures.length === 0
    // Jobs that did not fit the time left went back: so would the next batch's. (Jobs of a chain
    // that stopped at a failure went back too, but only their queue waits: the drain goes on.)
    if (done.outOfTime || s.deadline - Date.now() <= 0 || s.aborted) {
      // Claimed ahead but never started: back in place with the rest.
      await this.pipeline.handBack()
      return s.aborted ? 'stopped' : 'deadline'
    }
    const next = await this.pipeline.next()
    if (!next) return this.claims.again()
    s.rows = next.rows
    return undefined
  }

  /** The run phase: the batch in hand, with bounded concurrency, inside the time budget. */
  private async runBatch(): Promise<Batch> {
    const s = this.s
    const running = performance.now()
    const done = await runBatch(
      s.rows,
      s.config,
      s.hooks,
      s.clock,
      s.concurrency,
      s.durations,
      s.options.onJob,
      this.runtime,
      s.traced,
    )
    this.ranMs = performance.now() - running
    return done
  }

  private answer(stop: StopReason): DrainSummary {
    this.s.summary.stoppedBy = stop
    this.s.summary.durationMs = Date.now() - this.s.started
    return this.s.summary
  }
}
