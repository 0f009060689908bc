import type { RunJob } from '../drain/batch.js'
import type { Outcome } from '../drain/execute.js'
import type { DrainSummary } from '../drain/options.js'
import type { PublishOptions, PublishResult } from '../events/publish.js'
import type { EnqueueResult } from '../jobs/enqueue.js'
import type { MaintenanceReport } from '../maintain/maintain.js'
import type { ClaimedRow } from '../sql/claim.js'
import type { NewJob } from '../sql/enqueue.js'
import type { Span, Tracer, Tracing } from './otel.js'

/** What every span of a job's life says about where it goes (messaging semantic conventions). */
const MESSAGING = { 'messaging.system': 'sluice' } as const

/**
 * A producer span around an enqueue (or enqueueMany) call; the jobs it writes store its context,
 * so that each run of them continues this trace.
 */
export function traceEnqueue(
  tracing: Tracing,
  tracer: Tracer,
  job: { name: string; queue: string },
  rows: readonly NewJob[],
  write: () => Promise<EnqueueResult[]>,
): Promise<EnqueueResult[]> {
  return tracing.run(
    tracer,
    `sluice enqueue ${job.name}`,
    {
      kind: tracing.kind.PRODUCER,
      attributes: {
        ...MESSAGING,
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'enqueue',
        'messaging.destination.name': job.queue,
        'sluice.job.name': job.name,
        'sluice.queue': job.queue,
        ...(rows.length === 1 ? {} : { 'messaging.batch.message_count': rows.length }),
      },
    },
    (span) => {
      const context = tracing.serialize(span)
      if (context !== undefined) for (const row of rows) row.traceContext = context
      return write()
    },
    (span, results) => {
      if (results.length === 1) {
        const [result] = results
        span.setAttribute('sluice.enqueue.status', result!.status)
        if (result!.id !== null) {
          span.setAttribute('sluice.job.id', result!.id)
          span.setAttribute('messaging.message.id', result!.id)
        }
        return
      }
      const counts: Record<string, number> = {}
      for (const result of results) counts[result.status] = (counts[result.status] ?? 0) + 1
      for (const [status, n] of Object.entries(counts)) span.setAttribute(`sluice.enqueue.${status}`, n)
    },
  )
}

/**
 * A producer span around a publish; the event carries its context in the `traceparent` (and
 * `tracestate`) headers, unless the caller set them, and its subscribers' jobs store it.
 */
export function tracePublish(
  tracing: Tracing,
  tracer: Tracer,
  topic: string,
  options: PublishOptions,
  publish: (options: PublishOptions) => Promise<PublishResult>,
): Promise<PublishResult> {
  return tracing.run(
    tracer,
    `sluice publish ${topic}`,
    {
      kind: tracing.kind.PRODUCER,
      attributes: {
        ...MESSAGING,
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'publish',
        'messaging.destination.name': topic,
        'sluice.event.topic': topic,
      },
    },
    (span) => publish(withTraceHeaders(tracing, span, options)),
    (span, result) => {
      span.setAttribute('sluice.event.id', result.eventId)
      span.setAttribute('messaging.message.id', result.eventId)
      span.setAttribute('sluice.event.jobs', result.jobs)
    },
  )
}

/** Headers an event may have (the publish schema's limit). */
const MAX_HEADERS = 32

/** The options with the span's context added to the headers, where they have room and none of their own. */
function withTraceHeaders(tracing: Tracing, span: Span, options: PublishOptions): PublishOptions {
  const headers = options.headers
  // Anything but a plain object is left for the publish's own validation to refuse.
  if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers)))
    return options
  if (headers && (Object.hasOwn(headers, 'traceparent') || Object.hasOwn(headers, 'tracestate')))
    return options
  const context = tracing.serialize(span)
  if (context === undefined) return options
  const space = context.indexOf(' ')
  const added: Record<string, string> =
    space < 0
      ? { traceparent: context }
      : { traceparent: context.slice(0, space), tracestate: context.slice(space + 1) }
  if (Object.keys(headers ?? {}).length + Object.keys(added).length > MAX_HEADERS) return options
  return { ...options, headers: { ...headers, ...added } }
}

const OUTCOME = (outcome: Outcome): string =>
  outcome.kind === 'failed'
    ? outcome.willRetry
      ? 'retrying'
      : 'dead-lettered'
    : outcome.kind === 'expired'
      ? 'expired'
      : outcome.kind === 'suspended'
        ? 'suspended'
        : 'completed'

/**
 * A span around a drain invocation, and the RunJob that gives each job run a span of its own:
 * a child of the context the job was enqueued with (linked to the drain's span), or of the
 * drain's span when the job has none. The handler runs inside its job's span.
 */
export function traceDrain(
  tracing: Tracing,
  tracer: Tracer,
  drain: (runJob: RunJob) => Promise<DrainSummary>,
): Promise<DrainSummary> {
  return tracing.run(
    tracer,
    'sluice drain',
    { kind: tracing.kind.INTERNAL, attributes: { ...MESSAGING } },
    (drainSpan) => {
      const drainContext = tracing.active()
      const runJob: RunJob = async (row, execute) => {
        const enqueued = row.trace_context === null ? undefined : tracing.parse(row.trace_context)
        const parent = enqueued ?? drainContext
        const span = tracer.startSpan(
          `sluice run ${row.name}`,
          {
            kind: tracing.kind.CONSUMER,
            attributes: jobAttributes(row),
            links: enqueued === undefined ? [] : [{ context: drainSpan.spanContext() }],
          },
          parent,
        )
        try {
          const outcome = await tracing.within(span, parent, execute)
          span.setAttribute('sluice.job.outcome', OUTCOME(outcome))
          if (outcome.kind === 'failed') {
            const { failure } = outcome
            const code = (failure.error as { code?: string }).code
            span.setAttribute('error.type', code ?? failure.error.name)
            if (outcome.willRetry) span.setAttribute('sluice.job.retry_in_ms', failure.delayMs)
            tracing.fail(span, outcome.error)
          }
          return outcome
        } catch (error) {
          tracing.fail(span, error)
          throw error
        } finally {
          span.end()
        }
      }
      return drain(runJob)
    },
    (span, summary) => {
      span.setAttributes({
        'sluice.drain.invocation_id': summary.invocationId,
        'sluice.drain.queues': [...summary.queues],
        'sluice.drain.claimed': summary.claimed,
        'sluice.drain.completed': summary.completed,
        'sluice.drain.failed': summary.failed,
        'sluice.drain.retried': summary.retried,
        'sluice.drain.dead_lettered': summary.deadLettered,
        'sluice.drain.expired': summary.expired,
        'sluice.drain.handed_back': summary.handedBack,
        'sluice.drain.lost_leases': summary.lostLeases,
        'sluice.drain.remaining_ready': summary.remainingReady,
        'sluice.drain.stopped_by': summary.stoppedBy,
      })
    },
  )
}

function jobAttributes(row: ClaimedRow): Record<string, string | number> {
  return {
    ...MESSAGING,
    'messaging.operation.type': 'process',
    'messaging.operation.name': 'run',
    'messaging.destination.name': row.queue,
    'messaging.message.id': row.id,
    'sluice.job.id': row.id,
    'sluice.job.name': row.name,
    'sluice.queue': row.queue,
    'sluice.job.attempt': row.attempts,
    'sluice.job.max_attempts': row.max_attempts,
    // From when the job was due to when its run starts.
    'sluice.job.queue_wait_ms': Math.max(0, Date.now() - row.due_at.getTime()),
  }
}

/** A span around a maintenance run: which tasks ran, and the first error of any. */
export function traceMaintain(
  tracing: Tracing,
  tracer: Tracer,
  maintain: () => Promise<MaintenanceReport>,
): Promise<MaintenanceReport> {
  return tracing.run(
    tracer,
    'sluice maintain',
    { kind: tracing.kind.INTERNAL },
    () => maintain(),
    (span, report) => {
      const ran = report.tasks.filter((task) => task.ran)
      span.setAttribute(
        'sluice.maintain.tasks',
        ran.map((task) => task.task),
      )
      const failed = report.tasks.filter((task) => task.error !== undefined)
      if (failed.length > 0) {
        span.setAttribute(
          'sluice.maintain.failed',
          failed.map((task) => task.task),
        )
      }
    },
  )
}
