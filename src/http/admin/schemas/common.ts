/** Schemas every admin route shares: ids, paging, timestamps and the error body. */
import * as z from 'zod'

const MAX_BIGINT = '9223372036854775807'

/** A row id (job, dead letter, batch) in a path or a query: a positive integer as text. */
export const idSchema = z
  .lazy(() => z.string().regex(/^[1-9][0-9]{0,18}$/, 'must be a positive integer'))
  // Digits compare as text at equal length; zod runs this even after the regex failed.
  .refine(
    (s) => s.length < MAX_BIGINT.length || (s.length === MAX_BIGINT.length && s <= MAX_BIGINT),
    'must be at most 9223372036854775807',
  )
  .meta({ description: 'A positive integer, as a string (ids are 64-bit).' })

export const limitSchema = (max: number, fallback: number) =>
  z
    .string()
    .regex(/^[0-9]{1,7}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be at least 1').max(max, `must be at most ${max}`))
    .optional()
    .meta({ description: `At most this many, 1..${max}. Default ${fallback}.` })

export const offsetSchema = z.lazy(() =>
  z
    .string()
    .regex(/^[0-9]{1,9}$/, 'must be a whole number')
    .transform(Number)
    .optional(),
)

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
