/**
 * OpenTelemetry traces, when the application has them. `@opentelemetry/api` is an optional peer
 * dependency: it is imported on first need, once, and only if it is installed; without it, or
 * with no tracer provider registered, nothing here is called on any path that runs per job or
 * per statement beyond one check that finds no tracer.
 *
 * Spans: one per drain invocation, one per job run (a child of the trace context the job was
 * enqueued with, linked to its drain; else a child of the drain), one per SQL statement sent
 * inside a traced operation, one per enqueue and publish (its context is stored with the jobs it
 * writes), one per maintenance run, and one per request of the HTTP app.
 */
import type * as OtelApi from '@opentelemetry/api'
import { importOptional } from '../optional.js'
import type { TracerProviderLike, TracingOption } from './option.js'

type Api = typeof OtelApi
export type Tracer = OtelApi.Tracer
export type Span = OtelApi.Span
export type Context = OtelApi.Context

const TRACER_NAME = 'sluice'
/** Longest `db.query.text` recorded: Sluice's statements are parameterised, so no values are in it. */
export const MAX_QUERY_TEXT = 2048

let loading: Promise<Api | undefined> | undefined

/** `@opentelemetry/api`, imported once; undefined when it is not installed. */
function loadApi(): Promise<Api | undefined> {
  loading ??= importOptional<Api>('@opentelemetry/api', 'tracing').then(
    (module) => {
      const api = ('trace' in module ? module : (module as { default?: Api }).default) as Api | undefined
      return typeof api?.trace?.getTracerProvider === 'function' ? api : undefined
    },
    () => undefined,
  )
  return loading
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** One Sluice's view of OpenTelemetry. */
export class Tracing {
  /** The API, once `ready()` found it installed (and tracing is not off). */
  api: Api | undefined
  /** Whether statements get spans. */
  readonly statements: boolean
  readonly #given: TracerProviderLike | undefined
  readonly #off: boolean
  #ready: Promise<void> | undefined
  /** The provider a ProxyTracerProvider delegates to before any is registered. */
  #noop: unknown
  #provider: unknown
  #tracer: Tracer | undefined

  constructor(option: TracingOption | undefined) {
    this.#off = option === false
    this.#given = option ? option.tracerProvider : undefined
    this.statements = option ? option.statements !== false : true
  }

  /** Imports the API (once per process) unless tracing is off. */
  ready(): Promise<void> {
    if (this.#off) return Promise.resolve()
    this.#ready ??= loadApi().then((api) => {
      this.api = api
      if (api && typeof api.ProxyTracerProvider === 'function')
        this.#noop = new api.ProxyTracerProvider().getDelegate()
    })
    return this.#ready
  }

  /**
   * The tracer, when there is a provider: the one given, or the registered global one (looked up
   * each time, so a provider registered after createSluice is seen). Undefined otherwise: the
   * caller then does nothing at all, so that no span object (not even a no-op one) is made.
   */
  tracer(): Tracer | undefined {
    const api = this.api
    if (api === undefined) return undefined
    let provider: unknown = this.#given
    if (provider === undefined) {
      const global = api.trace.getTracerProvider() as OtelApi.TracerProvider & { getDelegate?: () => unknown }
      provider = typeof global.getDelegate === 'function' ? global.getDelegate() : global
      if (provider === this.#noop) return undefined
    }
    if (provider !== this.#provider) {
      this.#tracer = (provider as OtelApi.TracerProvider).getTracer(TRACER_NAME)
      this.#provider = provider
    }
    return this.#tracer
  }

  /** Runs `fn` with `span` active (its context the parent of spans made inside). */
  within<T>(span: Span, parent: Context, fn: () => T): T {
    const api = this.api!
    return api.context.with(api.trace.setSpan(parent, span), fn)
  }

  /** The active context. */
  active(): Context {
    return this.api!.context.active()
  }

  /** Ends `span` for a failure: the exception recorded, the status an error. */
  fail(span: Span, error: unknown): void {
    const api = this.api!
    if (error instanceof Error) span.recordException(error)
    else span.recordException({ message: String(error) })
    span.setStatus({
      code: api.SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message.slice(0, 1000) : String(error).slice(0, 1000),
    })
  }

  /**
   * Starts a span, runs `fn` inside it, ends it when `fn` settles (recording a throw). `done`
   * may add attributes from the result.
   */
  async run<T>(
    tracer: Tracer,
    name: string,
    options: OtelApi.SpanOptions,
    fn: (span: Span) => Promise<T>,
    done?: (span: Span, result: T) => void,
  ): Promise<T> {
    const parent = this.active()
    const span = tracer.startSpan(name, options, parent)
    try {
      const result = await this.within(span, parent, () => fn(span))
      done?.(span, result)
      return result
    } catch (error) {
      this.fail(span, error)
      throw error
    } finally {
      span.end()
    }
  }

  /** Kinds, without importing the enum where this module is not loaded. */
  get kind(): typeof OtelApi.SpanKind {
    return this.api!.SpanKind
  }

  /**
   * A span's context in the form jobs store (`traceparent`, then a space and `tracestate` when
   * there is one); undefined for an invalid context.
   */
  serialize(span: Span): string | undefined {
    const context = span.spanContext()
    if (!this.api!.trace.isSpanContextValid(context)) return undefined
    const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0')
    const traceparent = `00-${context.traceId}-${context.spanId}-${flags}`
    const state = context.traceState?.serialize()
    return state ? `${traceparent} ${state}` : traceparent
  }

  /**
   * The remote context a job was enqueued with, from its stored form (or from the `traceparent`
   * and `tracestate` headers of a request); undefined when absent or malformed.
   */
  parse(traceparent: string | null | undefined, tracestate?: string | null): Context | undefined {
    if (!traceparent) return undefined
    let header = traceparent
    let state = tracestate ?? undefined
    const space = traceparent.indexOf(' ')
    if (space >= 0) {
      header = traceparent.slice(0, space)
      state = traceparent.slice(space + 1)
    }
    const match = TRACEPARENT.exec(header.trim().toLowerCase())
    if (!match || match[1] === 'ff') return undefined
    const api = this.api!
    const context: OtelApi.SpanContext = {
      traceId: match[2]!,
      spanId: match[3]!,
      traceFlags: Number.parseInt(match[4]!, 16) & 1,
      isRemote: true,
    }
    if (!api.trace.isSpanContextValid(context)) return undefined
    if (state) {
      try {
        context.traceState = api.createTraceState(state)
      } catch {
        // A malformed tracestate is dropped; the traceparent still holds.
      }
    }
    return api.trace.setSpanContext(api.ROOT_CONTEXT, context)
  }

  /** The active span, if any (statements outside any trace get no span). */
  hasActiveSpan(context: Context): boolean {
    return this.api!.trace.getSpan(context) !== undefined
  }
}
