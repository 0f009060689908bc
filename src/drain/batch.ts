import type { ResolvedConfig } from '../config.js'
import type { HookRunner } from '../jobs/hooks.js'
import type { ClaimedRow, Completion, Failure, HandBack } from '../sql/index.js'
import type { DurationBook } from './budget.js'
import { type DrainRuntime, execute, type Outcome, Timeouts } from './execute.js'
import type { JobRun } from './options.js'

/** What running one batch produced, waiting for its settle. */
export interface Batch {
  completions: Completion[]
  failures: Failure[]
  handBacks: HandBack[]
  expired: number
  /** Jobs of steps put back by their own statement (nothing to settle). */
  suspended: number
  /** Jobs were handed back because they did not fit the time left (not because a chain stopped). */
  outOfTime: boolean
}

export interface Clock {
  started: number
  deadline: number
  /** Jobs started so far by this drain. */
  ran: number
  /** True while the drain's first wave of jobs is being started (see mayStart). */
  opening: boolean
  /** The caller's signal: once it is aborted, no job starts (the rest of the batch goes back). */
  signal?: AbortSignal | undefined
}

/**
 * Whether a job may start now: its expected duration must fit before the deadline. The drain's
 * opening wave (the jobs of its first claim that start at once) starts whatever their expected
 * duration, while at least half the budget is ahead: a job longer than the drain's whole budget
 * then runs until the deadline stops it, rather than waiting forever for a longer drain.
 */
function mayStart(expected: number, clock: Clock): boolean {
  const now = Date.now()
  if (now + expected <= clock.deadline) return true
  return clock.opening && clock.deadline - now >= (clock.deadline - clock.started) / 2
}

/**
 * The batch as units of work: each job alone, except jobs the claim marked `in_order`: those of
 * one queue form one chain, run one after another in claim order.
 */
function units(rows: readonly ClaimedRow[]): ClaimedRow[][] {
  const chains = new Map<string, ClaimedRow[]>()
  const out: ClaimedRow[][] = []
  for (const row of rows) {
    if (!row.in_order) {
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
          : outcome.kind === 'suspended'
            ? 'suspended'
            : 'completed',
    durationMs,
    ...(outcome.kind === 'failed' ? { error: outcome.failure.error } : {}),
    ...(outcome.kind === 'failed' && outcome.willRetry ? { retryInMs: outcome.failure.delayMs } : {}),
    ...(outcome.kind === 'suspended' ? { suspended: { reason: outcome.reason, until: outcome.runAt } } : {}),
  }
  try {
    onJob(run)
  } catch (error) {
    hooks.fatal(error, { phase: 'drain', job: row.name })
  }
}

/**
 * Runs one job to its outcome by calling `execute` (given only when the drain is traced: it
 * wraps each run in a span, see src/tracing/drain.ts).
 */
export type RunJob = (row: ClaimedRow, execute: () => Promise<Outcome>) => Promise<Outcome>

/**
 * Runs a batch with `concurrency` handlers; jobs that do not fit before the deadline, or that
 * would start after the caller's signal was aborted, are handed back.
 */
export async function runBatch(
  rows: ClaimedRow[],
  config: ResolvedConfig,
  hooks: HookRunner,
  clock: Clock,
  concurrency: number,
  durations: DurationBook,
  onJob: ((run: JobRun) => void) | undefined,
  runtime: DrainRuntime,
  traced?: RunJob,
): Promise<Batch> {
  const deadline = clock.deadline
  // When the claim's reply arrived: each job's admitted-to-started lag is measured from here.
  const claimedAt = Date.now()
  const batch = emptyBatch()
  const work = units(rows)
  let next = 0
  // One timer for the time limits of every job in the batch, and one options object for their runs.
  const timeouts = new Timeouts()
  const options = { hooks, deadline, runtime, claimedAt, timeouts, steps: runtime.steps }
  const handBack = (row: ClaimedRow): void => {
    batch.handBacks.push(handBackOf(row))
  }
  /** Runs one job; false when it did not start or failed (a chain stops there to keep its order). */
  const run = async (row: ClaimedRow): Promise<boolean> => {
    const job = config.jobs.get(row.name)
    if (clock.signal?.aborted) {
      // Stopped: the jobs not started yet go back unstarted, in place, attempt uncounted.
      handBack(row)
      return false
    }
    if (batch.outOfTime || (job && !mayStart(durations.expected(job.name, job.timeout), clock))) {
      // Jobs are taken in priority order, so once one does not fit the rest wait for the next drain.
      batch.outOfTime = true
      handBack(row)
      return false
    }
    clock.ran++
    const started = Date.now()
    const outcome =
      traced === undefined
        ? await execute(row, job, options)
        : await traced(row, () => execute(row, job, options))
    report(onJob, hooks, row, outcome, Date.now() - started)
    if (outcome.kind === 'failed') {
      batch.failures.push(outcome.failure)
      return false
    }
    // Put back already (step_suspend): nothing to settle.
    if (outcome.kind === 'suspended') {
      batch.suspended++
      return true
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
  // Each worker starts its first job before its first await: the opening wave is started here.
  const workers = Array.from({ length: Math.min(concurrency, work.length) }, worker)
  clock.opening = false
  try {
    await Promise.all(workers)
  } finally {
    timeouts.close()
  }
  return batch
}

export const emptyBatch = (): Batch => ({
  completions: [],
  failures: [],
  handBacks: [],
  expired: 0,
  suspended: 0,
  outOfTime: false,
})

export function absorb(into: Batch, from: Batch): void {
  into.completions.push(...from.completions)
  into.failures.push(...from.failures)
  into.handBacks.push(...from.handBacks)
  into.expired += from.expired
  into.suspended += from.suspended
  into.outOfTime ||= from.outOfTime
}

export const handBackOf = (row: ClaimedRow): HandBack => ({ id: row.id, token: row.token, dueAt: row.due_at })

/** Claim order: priority, then due time, then id. */
export const byQueueOrder = (a: ClaimedRow, b: ClaimedRow): number =>
  a.priority - b.priority || a.due_at.getTime() - b.due_at.getTime() || (BigInt(a.id) < BigInt(b.id) ? -1 : 1)
