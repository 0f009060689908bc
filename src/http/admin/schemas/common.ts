/** Schemas every admin route shares: ids, paging, timestamps and the error body. */
import * as z from 'zod'

const MAX_BIGINT = '9223372036854775807'
const DIGITS = /^[0-9]+$/
const POSITIVE = /^[1-9][0-9]*$/

/** Whether a string of digits is at most `max` (digits too): digits compare as text at equal length. */
function atMost(digits: string, max: string): boolean {
  const s = digits.replace(/^0+(?=.)/, '')
  return s.length < max.length || (s.length === max.length && s <= max)
}

/** A row id (job, dead letter, batch) in a path or a query: a positive integer as text. */
export const idSchema = z
  .lazy(() => z.string().regex(POSITIVE, 'must be a positive integer'))
  // zod runs this even after the pattern failed: only a positive integer too large is told so.
  .refine((s) => !POSITIVE.test(s) || atMost(s, MAX_BIGINT), `must be at most ${MAX_BIGINT}`)
  .meta({ description: 'A positive integer, as a string (ids are 64-bit).' })

/**
 * A row id in a request body: a string of digits as in a path, or a JSON number (a safe
 * integer: a larger one has lost its last digits already), answered as its string.
 */
export const bodyIdSchema = () =>
  z
    .union(
      [
        idSchema,
        z
          .number()
          .int('must be a positive integer (an id above 9007199254740991 must be sent as a string of digits)')
          .min(1, 'must be a positive integer'),
      ],
      { error: 'must be a job id: a positive integer, as a number or a string of digits, e.g. 95 or "95"' },
    )
    .meta({ description: 'A positive integer, or the same as a string of digits (ids are 64-bit).' })
    // After the union, not in it: an option with a transform aborts on its first issue, and the
    // union would then answer its own message instead of the option's.
    .transform(String)

/**
 * A whole number in a query string, `min`..`max`. A number too large gets the "at most" message
 * alone, however many digits it has.
 */
export const wholeNumberSchema = (min: number, max: number, what = 'must be a whole number') =>
  z
    .string()
    .regex(DIGITS, what)
    .refine((s) => !DIGITS.test(s) || atMost(s, String(max)), `must be at most ${max}`)
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`))

export const limitSchema = (max: number, fallback: number) =>
  wholeNumberSchema(1, max)
    .optional()
    .meta({ description: `At most this many, 1..${max}. Default ${fallback}.` })

export const offsetSchema = z.lazy(() => wholeNumberSchema(0, 999_999_999).optional())

export const ts = z.lazy(() => z.iso.datetime({ offset: true }))

export const lastError = z.lazy(() =>
  z
    .looseObject({
      name: z.string().optional(),
      message: z.string().optional(),
      attempt: z.number().optional(),
    })
    .nullable(),
)

export const errorBody = z.lazy(() =>
  z.object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      issues: z
        .array(
          z.object({
            path: z.array(z.union([z.string(), z.number()])),
            message: z.string(),
            code: z.string().optional(),
          }),
        )
        .optional(),
    }),
  }),
)

export const okBody = z.lazy(() => z.object({ ok: z.literal(true) }))

export const idsResponse = z.lazy(() => z.object({ ids: z.array(z.string()) }))
