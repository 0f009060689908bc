import * as z from 'zod'
import { callable } from '../callable.js'
import { ConfigError, toIssues } from '../errors.js'
import { ONCE } from '../validate.js'
import { WAKE_DEFAULTS, type WakeOptions } from './send.js'

const wakeSchema = z
  .object({
    url: z.url().optional(),
    secret: z.string().min(16).optional(),
    onEnqueue: z.boolean().optional(),
    debounceMs: z.number().int().min(0).max(3_600_000).optional(),
    timeoutMs: z.number().int().min(1).max(60_000).optional(),
    maxParallel: z.number().int().min(1).max(100).optional(),
    jobsPerDrain: z.number().int().min(1).max(1_000_000).optional(),
    waitUntil: callable().optional(),
  })
  .strict()

export type WakeInput = Partial<WakeOptions>

/** Wake-up settings: explicit options, then SLUICE_DRAIN_URL and SLUICE_SECRET, then defaults. */
export function resolveWake(
  input: WakeInput | undefined,
  env: Record<string, string | undefined>,
): Readonly<WakeOptions> {
  const parsed = wakeSchema.safeParse(input ?? {}, ONCE)
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
