import type { MiddlewareHandler } from 'hono'
import { routePath } from 'hono/route'
import type { Tracing } from './otel.js'

/**
 * A span per request of a route, when there is a tracer: a server span, continuing the trace of
 * the request's `traceparent` (and `tracestate`) headers when it has them; or, when a span is
 * already active (an HTTP instrumentation made one), an internal span inside it. The route's
 * handler runs inside it, so an enqueue or publish it makes continues the same trace. Without a
 * `route` (a middleware over many routes), the span is named after the route that answered.
 */
export function traceRoute(tracing: Tracing, route?: string): MiddlewareHandler {
  return async (c, next) => {
    await tracing.ready()
    const tracer = tracing.tracer()
    if (tracer === undefined) return next()
    const active = tracing.active()
    const inTrace = tracing.hasActiveSpan(active)
    const parent = inTrace
      ? active
      : (tracing.parse(c.req.header('traceparent'), c.req.header('tracestate')) ?? active)
    const method = c.req.method
    const span = tracer.startSpan(
      route === undefined ? method : `${method} ${route}`,
      {
        kind: inTrace ? tracing.kind.INTERNAL : tracing.kind.SERVER,
        attributes: {
          'http.request.method': method,
          'url.path': c.req.path,
          ...(route === undefined ? {} : { 'http.route': route }),
        },
      },
      parent,
    )
    try {
      await tracing.within(span, parent, next)
      if (route === undefined) {
        const answered = routePath(c, -1)
        span.updateName(`${method} ${answered}`)
        span.setAttribute('http.route', answered)
      }
      const status = c.res.status
      span.setAttribute('http.response.status_code', status)
      // A server span is an error for a 5xx only: a 4xx is the client's.
      if (status >= 500) tracing.fail(span, c.error ?? new Error(`HTTP ${status}`))
    } catch (error) {
      tracing.fail(span, error)
      throw error
    } finally {
      span.end()
    }
  }
}
