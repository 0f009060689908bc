import * as z from 'zod'
import { nameSchema } from '../names.js'

export const drainOptionsSchema = z
  .object({
    queues: z.array(nameSchema).min(1).max(100).optional(),
    budgetMs: z.number().int().positive().max(3_600_000).optional(),
    maxJobs: z.number().int().positive().max(1_000_000).optional(),
    concurrency: z.number().int().min(1).max(1000).optional(),
    batchSize: z.number().int().min(1).max(10_000).optional(),
    /** Statements kept in flight at once (see the `drain.pipeline` setting). */
    pipeline: z.number().int().min(1).max(8).optional(),
    /** What the platform says is left (Lambda's getRemainingTimeInMillis()); caps the budget. */
    platformRemainingMs: z.number().min(0).optional(),
    /** Higher-priority drains are preferred by later admission features; recorded on the invocation. */
    priority: z.number().int().min(-1000).max(1000).optional(),
    onJob: z.custom<(run: JobRun) => void>((v) => typeof v === 'function', 'must be a function').optional(),
    /** The invocation's id, for a caller that must be able to end it after a failure. Default a fresh `drn_<uuid>`. */
    invocationId: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'must be 1-100 letters, digits, "_", ".", ":" or "-"')
      .optional(),
    /** Aborted: claim nothing more; the batch running finishes and settles, and the drain ends (`stopped`). */
    signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, 'must be an AbortSignal').optional(),
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
  /** `suspended`: a job of steps that sleeps, waits, or stopped at the deadline after new steps (docs/steps.md). */
  outcome: 'completed' | 'expired' | 'retrying' | 'dead-lettered' | 'suspended'
  durationMs: number
  error?: { name: string; message: string }
  /** Backoff before the next attempt, for `retrying`. */
  retryInMs?: number
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
   * Settles that matched no lease any more: another drain had re-claimed the job, or a settle
   * sent again after its connection dropped found that its first try had landed.
   */
  lostLeases: number
  /** Due jobs left in the drained queues, counted up to 1,000. */
  remainingReady: number
  stoppedBy: StopReason
  durationMs: number
}
