import { PermanentJobError, SlowDownError, SluiceError } from '../errors.js'
import type { EventEnvelope, SubscriberRuntime } from '../events/subscriber.js'
import type { AnyJob, JobContext } from '../jobs/define.js'
import { backoffDelay } from '../jobs/define.js'
import type { HookRunner } from '../jobs/hooks.js'
import type { ClaimedRow, Completion, Failure } from '../sql/index.js'

export type Outcome =
  | { kind: 'completed'; completion: Completion }
  | { kind: 'expired'; completion: Completion }
  | { kind: 'failed'; failure: Failure; willRetry: boolean; error: unknown }

export class JobTimeoutError extends SluiceError {
  constructor(ms: number, byDeadline: boolean) {
    super(
      'JOB_TIMEOUT',
      byDeadline ? `Stopped at the drain's deadline after ${ms} ms` : `Timed out after ${ms} ms`,
    )
  }
}

function describe(error: unknown): { name: string; message: string; code?: string } {
  if (error instanceof SluiceError)
    return { name: error.name, message: error.message.slice(0, 4000), code: error.code }
  if (error instanceof Error) return { name: error.name, message: error.message.slice(0, 4000) }
  return { name: 'Error', message: String(error).slice(0, 4000) }
}

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
  },
): Promise<Outcome> {
  const started = Date.now()
  const waitMs = Math.max(0, started - row.due_at.getTime())
  const lagMs = options.claimedAt === undefined ? null : Math.max(0, started - options.claimedAt)
  const base = { id: row.id, token: row.token, waitMs, lagMs }
  const fail = (error: unknown, permanent: boolean, delayMs: number): Outcome => {
    const final = permanent || row.attempts >= row.max_attempts
    const failure: Failure = {
      ...base,
      error: describe(error),
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
  if (!job) {
    // Deployed code may not know this job yet (or any more): retry on the default schedule.
    return fail(
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
      completion: { ...base, status: 'completed', durationMs: null, mark: { eventId, subscriber: job.name } },
    }
  }
  if (job.queueTimeout !== undefined && waitMs > job.queueTimeout) {
    return { kind: 'expired', completion: { ...base, status: 'expired', durationMs: null } }
  }
  const parsed = job.input.safeParse(row.payload)
  if (!parsed.success) {
    return fail(
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
  // The job's signal is made when the handler first reads it: most handlers never do, and an
  // AbortController per job is a measurable share of a no-op job's cost.
  let controller: AbortController | undefined
  let timedOut: JobTimeoutError | undefined
  let expire: (error: JobTimeoutError) => void = () => {}
  const aborted = new Promise<never>((_, reject) => {
    expire = reject
  })
  aborted.catch(() => {})
  /** Set as soon as the handler's promise settles, whatever the outcome. */
  let finished = false
  const timer = setTimeout(() => {
    // A loaded event loop reaches this timer late, and the handler's completion may be waiting
    // behind it (a reply already read from a socket, an immediate): those are handled before the
    // check phase, so a run that finished within its limit is never stopped for the loop's lateness.
    setImmediate(() => {
      if (finished) return
      timedOut = new JobTimeoutError(limit, byDeadline)
      controller?.abort(timedOut)
      expire(timedOut)
    })
  }, limit)
  const context: JobContext = {
    id: row.id,
    name: row.name,
    queue: row.queue,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    enqueuedAt: row.enqueued_at,
    get signal(): AbortSignal {
      if (!controller) {
        controller = new AbortController()
        if (timedOut) controller.abort(timedOut)
      }
      return controller.signal
    },
    deadline: new Date(started + limit),
  }
  const event = { job: job.name, queue: row.queue, input: parsed.data, context }
  const runtime = options.runtime ?? { transaction: undefined }
  let ran = false
  let result: unknown
  try {
    await options.hooks.before('beforeExecution', event)
    result = await options.hooks.around('aroundExecution', event, async () => {
      const handler = job.subscriber
        ? () => job.subscriber!.handle(parsed.data as EventEnvelope, context, runtime)
        : () => job.run(parsed.data, context)
      const run = Promise.resolve()
        .then(handler)
        .finally(() => {
          finished = true
        })
      const value = await Promise.race([run, aborted])
      ran = true
      return value
    })
  } catch (error) {
    clearTimeout(timer)
    if (!ran) {
      const outcome = fail(error, error instanceof PermanentJobError, backoffDelay(job.retry, row.attempts))
      await options.hooks.after(
        'onFailure',
        { ...event, error, willRetry: outcome.kind === 'failed' && outcome.willRetry },
        job.name,
      )
      return outcome
    }
    // The handler succeeded and an around-hook threw afterwards: the job is done all the same.
    options.hooks.fatal(error, { phase: 'execution-hook', job: job.name })
  } finally {
    clearTimeout(timer)
  }
  const durationMs = Date.now() - started
  await options.hooks.after('afterExecution', { ...event, result, durationMs }, job.name)
  const completion: Completion = { ...base, status: 'completed', durationMs }
  // A subscriber's completed run is recorded as processed by the settle statement.
  if (job.subscriber)
    completion.mark = { eventId: (parsed.data as EventEnvelope).eventId, subscriber: job.name }
  return { kind: 'completed', completion }
}
