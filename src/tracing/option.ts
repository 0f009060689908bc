/** The `tracing` option's types: structural, so that declaring it needs no `@opentelemetry/api`. */

/** Anything with `getTracer`, as `@opentelemetry/api`'s TracerProvider. */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): unknown
}

/**
 * The `tracing` option of createSluice. Default: the global tracer provider of
 * `@opentelemetry/api` (registered by the OpenTelemetry SDK), when the package is installed and a
 * provider is registered. `false`: never trace (the package is not even imported).
 */
export type TracingOption =
  | false
  | {
      /** Use this provider rather than the global one. */
      tracerProvider?: TracerProviderLike
      /** A span per SQL statement (inside a traced operation). Default true; turn it off where a pg instrumentation already makes them. */
      statements?: boolean
    }
