import * as z from 'zod/mini'

/**
 * Parse options for a schema checked once per process: definitions, options, secrets. zod
 * compiles an object schema into a faster parser on its first parse, which costs more than it
 * saves for a single parse, and is paid on every cold start. Schemas parsed per request or per
 * job keep the compiled path.
 */
export const ONCE = { jitless: true } as const

/*
 * Building a zod schema costs a cold start 10-20 µs, and a function imports several hundred of
 * Sluice's: most check options an application never sets, or requests a function never serves.
 * So a schema at a module's top level is `z.lazy(() => …)`, built at its first parse, and an
 * option group inside a schema parsed as the app loads (createSluice, defineJob) is `given(…)`.
 */

/**
 * An optional field whose schema is built the first time a value is given: not at import, and
 * not for its absence (`z.optional(z.lazy(…))` builds the inner schema to learn how it treats
 * absence). The schema's issues are the field's, with their paths and codes. Only for schemas
 * that check and do not transform: the value passes through as given.
 */
export function given<T extends z.core.$ZodType>(schema: () => T) {
  let built: T | undefined
  return z.optional(
    z.custom<z.input<T>>().check(
      z.superRefine((value, ctx) => {
        built ??= schema()
        const checked = z.safeParse(built, value, ONCE)
        if (checked.success) return
        for (const issue of checked.error.issues) ctx.addIssue(issue as unknown as z.core.$ZodRawIssue)
      }),
    ),
  )
}
