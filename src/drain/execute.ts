import * as z from 'zod/mini'
import { describeError, PermanentJobError, SlowDownError, SluiceError } from '../errors.js'
import type { EventEnvelope, SubscriberRuntime } from '../events/subscriber.js'
import type { AnyJob } from '../jobs/define.js'
import { backoffDelay } from '../jobs/define.js'
import type { HookRunner } from '../jobs/hooks.js'
import type { ClaimedRow, Completion, Failure } from '../sql/index.js'
import { suspendJob } from '../sql/steps.js'
import { ResultTooLargeError } from '../steps/errors.js'
import { type StepDeps, Suspension } from '../steps/state.js'
import { storedResult } from '../steps/values.js'
import { abortRun, RunContext, runSteps } from './context.js'

/** What a drain gives the jobs it runs: subscribers' ctx.transaction, and what steps need. */
export type DrainRuntime = SubscriberRuntime & { steps?: StepDeps }

export type Outcome =
  | { kind: 'completed'; completion: Completion }
  | { kind: 'expired'; completion: Completion }
  | { kind: 'failed'; failure: Failure; willRetry: boolean; error: unknown }
  /**
   * A job made of steps that stopped for now, already put back by its own statement (step_suspend):
   * it sleeps, waits, or reached the deadline after new steps completed. Nothing to settle.
   */
  | { kind: 'suspended'; reason: 'sleep' | 'wait' | 'progress'; runAt: Date | null }

export class JobTimeoutError extends SluiceError {
  constructor(ms: number, byDeadline: boolean, step?: string) {
    super(
      // The drain's deadline is the platform's time, not the job's doing: the circuit breaker
      // does not count it (settle_fail).
      byDeadline ? 'DRAIN_DEADLINE' : 'JOB_TIMEOUT',
      (byDeadline ? `Stopped at the drain's deadline after ${ms} ms` : `Timed out after ${ms} ms`) +
        (step === undefined
          ? ''
          : ` in step "${step}", with no step completed in this run: a step must finish within one run (the drain's budget and the job's timeout)`),
    )
  }
}

/**
 * Puts a job of steps back (step_suspend) and says so: due at the end of its sleeps, when its
 * waits resolve (or time out), or at once when it stopped at the deadline after new steps.
 */
async function suspend(
  deps: StepDeps,
  row: ClaimedRow,
  pause: Suspension,
  progress: boolean,
): Promise<Outcome> {
  const until = pause.until === null ? null : new Date(pause.until)
  let rows: { run_at: Date | null }[]
  try {
    ;({ rows } = await deps.db.query<{ run_at: Date | null }>(suspendJob(deps.t, row.id, row.token, until)))
  } catch (error) {
    // Not put back: settled as a failed attempt instead (retried), as any failure.
    return failed(row, Date.now(), 0, null, error, false, 1_000)
  }
  return {
    kind: 'suspended',
    reason: progress ? 'progress' : pause.waits ? 'wait' : 'sleep',
    runAt: rows[0]?.run_at ?? null,
  }
}

/** A job's time limit, as Timeouts keeps it. */
interface Limit {
  /** When it runs out (epoch ms). */
  at: number
  /** Called once when it ran out, unless cleared first. */
  expire: () => void
  /** Its place in Timeouts' active list; -1 once cleared or expired. */
  index: number
}

/**
 * The time limits of the jobs a batch runs, on one timer: armed for the earliest limit, and armed
 * again when that one fires, rather than a timer (and a promise race) per job. A limit cleared
 * before its time leaves the timer as it is; the timer then fires once for nothing and finds
 * nothing due. Like a timer per job, a limit that runs out is acted on in the check phase after
 * its timer: a handler's completion already waiting behind a late timer is seen first.
 */
export class Timeouts {
  private readonly active: Limit[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  /** When the timer fires; +Infinity while none is armed. */
  private armedFor = Number.POSITIVE_INFINITY

  /** Calls `expire` at `at` unless the limit is cleared first. */
  add(at: number, expire: () => void): Limit {
    const limit: Limit = { at, expire, index: this.active.length }
    this.active.push(limit)
    if (at < this.armedFor) this.arm(at)
    return limit
  }

  clear(limit: Limit): void {
    const i = limit.index
    if (i < 0) return
    limit.index = -1
    const last = this.active.pop()!
    if (last !== limit) {
      this.active[i] = last
      last.index = i
    }
  }

  /** Stops the timer: every job the limits were for has ended. */
  close(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.armedFor = Number.POSITIVE_INFINITY
    for (const limit of this.active) limit.index = -1
    this.active.length = 0
  }

  private arm(at: number): void {
    clearTimeout(this.timer)
    this.armedFor = at
    this.timer = setTimeout(this.fired, Math.max(0, at - Date.now()))
  }

  private readonly fired = (): void => {
    this.timer = undefined
    this.armedFor = Number.POSITIVE_INFINITY
    setImmediate(this.due)
  }

  private readonly due = (): void => {
    const now = Date.now()
    let next = Number.POSITIVE_INFINITY
    // Expiring one limit may clear others (its job's hooks run later, never here), so walk a copy.
    for (const limit of this.active.slice()) {
      if (limit.index < 0) continue
      if (limit.at <= now) {
        this.clear(limit)
        limit.expire()
      } else if (limit.at < next) next = limit.at
    }
    if (next < this.armedFor) this.arm(next)
  }
}

/** A failed attempt's outcome: retried after `delayMs`, or dead-lettered when `permanent` or out of attempts. */
function failed(
  row: ClaimedRow,
  started: number,
  waitMs: number,
  lagMs: number | null,
  error: unknown,
  permanent: boolean,
  delayMs: number,
): Outcome {
  const final = permanent || row.attempts >= row.max_attempts
  const failure: Failure = {
    id: row.id,
    token: row.token,
    waitMs,
    lagMs,
    error: describeError(error),
    delayMs,
    final,
    durationMs: Date.now() - started,
  }
  // A handler's "slow down": retried after the delay it asked for, and its partition waits too.
  if (error instanceof SlowDownError) {
    failure.delayMs = error.retryAfterMs
    failure.slowDownMs = error.retryAfterMs
  }
  // A job run in order keeps its place: it stays at the head and its queue waits.
  if (row.in_order) failure.keepPlace = row.due_at
  return { kind: 'failed', failure, willRetry: !final, error }
}

/** Whether the job's admission policy adapts its cap to the lag from claim to start. */
function adaptive(job: AnyJob | undefined): boolean {
  // A job's policy as defined (`adaptive`), or a subscriber's as stored (`adaptive_min`).
  const policy = job?.admission as { adaptive?: unknown; adaptive_min?: unknown } | undefined
  return policy !== undefined && (policy.adaptive !== undefined || (policy.adaptive_min ?? null) !== null)
}

/**
 * How long a run stopped by its time limit waits for the steps it is running to end and be
 * recorded (their signal aborted), well inside the lease's grace after the deadline.
 */
const STEP_GRACE_MS = 1_000

/**
 * Runs one claimed job to an outcome. Never throws: whatever the handler or a hook
 * does, the job ends completed, expired or failed (and so retried or dead-lettered).
 */
export async function execute(
  row: ClaimedRow,
  job: AnyJob | undefined,
  options: {
    hooks: HookRunner
    deadline: number
    now?: number
    runtime?: SubscriberRuntime
    /** When the claim that admitted the job returned. */
    claimedAt?: number
    /** The batch's shared timer for time limits (see Timeouts); without it, the job has its own. */
    timeouts?: Timeouts
    /** What the job's steps need (docs/steps.md); without it, a job that calls one fails. */
    steps?: StepDeps
  },
): Promise<Outcome> {
  const hooks = options.hooks
  const started = Date.now()
  const waitMs = Math.max(0, started - row.due_at.getTime())
  // Only an adaptive policy reads the lag (its cap follows it): for any other job the settle
  // then builds nothing for admission.
  const lagMs =
    options.claimedAt === undefined || !adaptive(job) ? null : Math.max(0, started - options.claimedAt)
  if (!job) {
    // Deployed code may not know this job yet (or any more): retry on the default schedule.
    return failed(
      row,
      started,
      waitMs,
      lagMs,
      new SluiceError('UNKNOWN_JOB', `No handler for job "${row.name}" in this deployment`),
      false,
      backoffDelay(
        { maxAttempts: 5, baseDelayMs: 10_000, factor: 2, maxDelayMs: 600_000, jitter: 0.2 },
        row.attempts,
      ),
    )
  }
  if (job.subscriber && row.processed) {
    // This subscriber already processed this event (the claim saw its mark): done, handler not run.
    const eventId = String((row.payload as { eventId?: unknown }).eventId)
    return {
      kind: 'completed',
      completion: {
        id: row.id,
        token: row.token,
        waitMs,
        lagMs,
        status: 'completed',
        durationMs: null,
        mark: { eventId, subscriber: job.name },
      },
    }
  }
  if (job.queueTimeout !== undefined && waitMs > job.queueTimeout) {
    return {
      kind: 'expired',
      completion: { id: row.id, token: row.token, waitMs, lagMs, status: 'expired', durationMs: null },
    }
  }
  const parsed = z.safeParse(job.input, row.payload)
  if (!parsed.success) {
    return failed(
      row,
      started,
      waitMs,
      lagMs,
      new SluiceError(
        'INVALID_INPUT',
        `Stored payload no longer matches the input schema: ${parsed.error.issues[0]?.message}`,
      ),
      true,
      0,
    )
  }

  const byDeadline = options.deadline - started < job.timeout
  const limit = Math.max(0, Math.min(job.timeout, options.deadline - started))
  let timedOut: JobTimeoutError | undefined
  /** Rejects the wait on the handler (its time limit, or its steps suspending it); set as the handler starts. */
  let stop: ((error: JobTimeoutError | Suspension) => void) | undefined
  // The job's signal and steps are made when the handler first reads them (see RunContext): most
  // handlers never do, and an AbortController per job is a measurable share of a no-op job's cost.
  const context = new RunContext(row, new Date(started + limit), options.steps, (suspension) =>
    stop?.(suspension),
  )
  // The limit is checked on the batch's shared timer. It runs from the job's start, hooks included;
  // it is cleared as soon as the handler's promise settles, whatever the outcome.
  const timeouts = options.timeouts ?? new Timeouts()
  const expiry = timeouts.add(started + limit, () => {
    timedOut = new JobTimeoutError(limit, byDeadline, runSteps(context)?.running)
    abortRun(context, timedOut)
    stop?.(timedOut)
  })
  const event = { job: job.name, queue: row.queue, input: parsed.data, context }
  const runtime = options.runtime ?? { transaction: undefined }
  let ran = false
  let result: unknown
  try {
    if (hooks.has('beforeExecution')) await hooks.before('beforeExecution', event)
    result = await hooks.around(
      'aroundExecution',
      event,
      // The handler's result, or the time limit's error as soon as that runs out (the handler is
      // not waited for then: it was told through its signal).
      () =>
        new Promise<unknown>((resolve, reject) => {
          if (timedOut) reject(timedOut)
          else stop = reject
          let run: unknown
          try {
            run = job.subscriber
              ? job.subscriber.handle(parsed.data as EventEnvelope, context, runtime)
              : job.run(parsed.data, context)
          } catch (error) {
            timeouts.clear(expiry)
            reject(error)
            return
          }
          Promise.resolve(run).then(
            (value) => {
              timeouts.clear(expiry)
              if (!timedOut) ran = true
              resolve(value)
            },
            (error: unknown) => {
              timeouts.clear(expiry)
              reject(error)
            },
          )
        }),
    )
  } catch (error) {
    // A run of steps that stops for now (its steps suspended it, or its time limit came after new
    // steps completed): put back by its own statement, attempt uncounted.
    // Its steps are closed first: one that ends as the limit stops it is recorded and counted, or neither.
    const steps = timedOut !== undefined && error === timedOut ? runSteps(context) : undefined
    const progressed = steps !== undefined && (await steps.close(STEP_GRACE_MS))
    if (options.steps && (error instanceof Suspension || progressed)) {
      timeouts.clear(expiry)
      const pause = error instanceof Suspension ? error : new Suspension(null, false)
      return suspend(options.steps, row, pause, progressed)
    }
    if (!ran) {
      const outcome = failed(
        row,
        started,
        waitMs,
        lagMs,
        error,
        error instanceof PermanentJobError || error instanceof ResultTooLargeError,
        backoffDelay(job.retry, row.attempts),
      )
      await hooks.after(
        'onFailure',
        { ...event, error, willRetry: outcome.kind === 'failed' && outcome.willRetry },
        job.name,
      )
      return outcome
    }
    // The handler succeeded and an around-hook threw afterwards: the job is done all the same.
    hooks.fatal(error, { phase: 'execution-hook', job: job.name })
  } finally {
    timeouts.clear(expiry)
    if (options.timeouts === undefined) timeouts.close()
  }
  const durationMs = Date.now() - started
  // The handler's return value, stored with the archived job; one too large fails the attempt for good.
  let stored: string | undefined
  if (result !== undefined) {
    try {
      stored = storedResult(result, `job "${job.name}"`)
    } catch (error) {
      return failed(row, started, waitMs, lagMs, error, true, 0)
    }
  }
  if (hooks.has('afterExecution'))
    await hooks.after('afterExecution', { ...event, result, durationMs }, job.name)
  const completion: Completion = {
    id: row.id,
    token: row.token,
    waitMs,
    lagMs,
    status: 'completed',
    durationMs,
  }
  if (stored !== undefined) completion.result = stored
  // A subscriber's completed run is recorded as processed by the settle statement.
  if (job.subscriber)
    completion.mark = { eventId: (parsed.data as EventEnvelope).eventId, subscriber: job.name }
  return { kind: 'completed', completion }
}
