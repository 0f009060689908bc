import * as z from 'zod/mini'
import { nameSchema } from '../names.js'

/** The drain options' object schema (the HTTP body picks from it); drainOptionsSchema builds it at its first parse. */
export const drainOptionsObject = () =>
  z.strictObject({
    queues: z.optional(z.array(nameSchema).check(z.minLength(1), z.maxLength(100))),
    budgetMs: z.optional(z.int().check(z.positive(), z.maximum(3_600_000))),
    maxJobs: z.optional(z.int().check(z.positive(), z.maximum(1_000_000))),
    concurrency: z.optional(z.int().check(z.minimum(1), z.maximum(1000))),
    batchSize: z.optional(z.int().check(z.minimum(1), z.maximum(10_000))),
    /** Statements kept in flight at once (see the `drain.pipeline` setting). */
    pipeline: z.optional(z.int().check(z.minimum(1), z.maximum(8))),
    /** What the platform says is left (Lambda's getRemainingTimeInMillis()); caps the budget. */
    platformRemainingMs: z.optional(z.number().check(z.minimum(0))),
    /** Higher-priority drains are preferred by later admission features; recorded on the invocation. */
    priority: z.optional(z.int().check(z.minimum(-1000), z.maximum(1000))),
    onJob: z.optional(z.custom<(run: JobRun) => void>((v) => typeof v === 'function', 'must be a function')),
    /** The invocation's id, for a caller that must be able to end it after a failure. Default a fresh `drn_<uuid>`. */
    invocationId: z.optional(
      z
        .string()
        .check(z.regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1-100 letters, digits, "_", ".", ":" or "-"')),
    ),
    /** Aborted: claim nothing more; the batch running finishes and settles, and the drain ends (`stopped`). */
    signal: z.optional(z.custom<AbortSignal>((v) => v instanceof AbortSignal, 'must be an AbortSignal')),
  })

export const drainOptionsSchema = z.lazy(drainOptionsObject)

/** One job run by a drain, as `onJob` sees it once the run has ended (the batch settles afterwards). */
export interface JobRun {
  id: string
  name: string
  queue: string
  /** 1 on the first run. */
  attempt: number
  maxAttempts: number
  /** `retrying` and `dead-lettered` are failures; `expired` jobs waited past their queueTimeout and did not run. */
  /** `suspended`: a job of steps that sleeps, waits, or stopped at the deadline after new steps (docs/steps.md). */
  outcome: 'completed' | 'expired' | 'retrying' | 'dead-lettered' | 'suspended'
  durationMs: number
  error?: { name: string; message: string }
  /** Backoff before the next attempt, for `retrying`. */
  retryInMs?: number
  /**
   * For `suspended`: why, and when it is due again (null: when what it waits for happens).
   * `sleep`: ctx.sleep; `wait`: ctx.waitForEvent or ctx.invoke (until its timeout, if any);
   * `progress`: its time ran out after new steps completed, and it goes on in a later drain.
   */
  suspended?: { reason: 'sleep' | 'wait' | 'progress'; until: Date | null }
}

export type DrainOptions = z.input<typeof drainOptionsSchema> & {
  /** Called after each job this drain runs (for logging); errors it throws go to onFatalError. */
  onJob?: (run: JobRun) => void
}

/**
 * Why a drain returned. `empty`: no due job was left that it could take (the queues are empty,
 * or what is due is paused, held, throttled or leased by other drains). `deadline`: time ran
 * out with jobs left that a drain with more time can run (the next drain starts with them).
 * `maxJobs`: it claimed `maxJobs` jobs. `stopped`: its `signal` was aborted (claimed jobs not
 * started went back in place).
 */
export type StopReason = 'empty' | 'deadline' | 'maxJobs' | 'stopped'

export interface DrainSummary {
  invocationId: string
  queues: string[]
  /**
   * Jobs taken from the queues. A drain claims only jobs it expects to start and always starts
   * those of its first claim, so `claimed > 0` means it made progress, and 0 that nothing due
   * was left it could run: a loop `do { s = await drain() } while (s.claimed > 0)` ends.
   */
  claimed: number
  completed: number
  /** Runs that threw or timed out: retried + deadLettered. */
  failed: number
  retried: number
  deadLettered: number
  expired: number
  /**
   * Claimed but not started before the deadline (jobs ran longer than expected, or an explicit
   * `batchSize` took more than the time allowed), and jobs taken by a claim whose reply was
   * lost with its connection: back in the queue, attempt not counted.
   */
  handedBack: number
  /**
   * Jobs of steps put back by their own statement, attempt not counted: they sleep, wait for an
   * event or a child, or stopped at the deadline after new steps completed (docs/steps.md).
   */
  suspended: number
  /**
   * Settles that matched no lease any more: another drain had re-claimed the job, or a settle
   * sent again after its connection dropped found that its first try had landed.
   */
  lostLeases: number
  /** Due jobs left in the drained queues, counted up to 1,000. */
  remainingReady: number
  stoppedBy: StopReason
  durationMs: number
}
