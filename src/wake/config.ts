import * as z from 'zod/mini'
import { callable } from '../callable.js'
import { ConfigError, toIssues } from '../errors.js'
import { ONCE } from '../validate.js'
import { WAKE_DEFAULTS, type WakeOptions } from './send.js'

const wakeSchema = z.lazy(() =>
  z.strictObject({
    url: z.optional(z.url()),
    secret: z.optional(z.string().check(z.minLength(16))),
    onEnqueue: z.optional(z.boolean()),
    debounceMs: z.optional(z.int().check(z.minimum(0), z.maximum(3_600_000))),
    timeoutMs: z.optional(z.int().check(z.minimum(1), z.maximum(60_000))),
    maxParallel: z.optional(z.int().check(z.minimum(1), z.maximum(100))),
    jobsPerDrain: z.optional(z.int().check(z.minimum(1), z.maximum(1_000_000))),
    waitUntil: z.optional(callable()),
  }),
)

export type WakeInput = Partial<WakeOptions>

/** Wake-up settings: explicit options, then SLUICE_DRAIN_URL and SLUICE_SECRET, then defaults. */
export function resolveWake(
  input: WakeInput | undefined,
  env: Record<string, string | undefined>,
): Readonly<WakeOptions> {
  // No options, nothing to check: the schema is not built (see validate.ts).
  const parsed = input === undefined ? { success: true as const } : wakeSchema.safeParse(input, ONCE)
  if (!parsed.success) {
    throw new ConfigError(
      `Invalid wake options: ${parsed.error.issues[0]?.message}`,
      toIssues(parsed.error.issues),
    )
  }
  const url = input?.url ?? env.SLUICE_DRAIN_URL
  if (url !== undefined && !z.url().safeParse(url, ONCE).success)
    throw new ConfigError(`SLUICE_DRAIN_URL is not a URL: "${url}"`)
  return Object.freeze({
    ...WAKE_DEFAULTS,
    ...input,
    url,
    secret: input?.secret ?? env.SLUICE_SECRET?.split(',')[0]?.trim(),
    onEnqueue: input?.onEnqueue ?? url !== undefined,
    waitUntil: input?.waitUntil,
  })
}
