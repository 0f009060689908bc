import * as z from 'zod'
import { nameSchema } from '../names.js'

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

export type StopReason = 'empty' | 'deadline' | 'maxJobs' | 'stopped'

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
