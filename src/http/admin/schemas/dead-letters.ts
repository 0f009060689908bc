/** The dead-letter routes' schemas. */
import * as z from 'zod'
import { nameSchema } from '../../../names.js'
import { bodyIdSchema, idSchema, lastError, limitSchema, ts } from './common.js'

export const deadLettersQuery = z
  .object({
    queue: z.optional(nameSchema),
    name: z.optional(nameSchema),
    limit: limitSchema(1000, 100),
    cursor: idSchema.optional().meta({ description: 'The nextCursor of the previous page (newest first).' }),
  })
  .strict()

export const deadLetterFilterBody = z.lazy(() =>
  z
    .object({
      ids: z.array(bodyIdSchema()).min(1).max(10_000).optional(),
      queue: z.optional(nameSchema),
      name: z.optional(nameSchema),
      limit: z.number().int().min(1).max(10_000).optional(),
    })
    .strict()
    .refine((b) => b.ids !== undefined || b.queue !== undefined || b.name !== undefined, {
      message: 'must name at least one of ids, queue, name (an empty filter would take every dead letter)',
    }),
)

export const deadLetterRow = z.lazy(() =>
  z.object({
    id: z.string(),
    queue: z.string(),
    name: z.string(),
    payload: z.unknown(),
    priority: z.number(),
    attempts: z.number(),
    maxAttempts: z.number(),
    enqueuedAt: ts,
    failedAt: ts,
    lastError,
    errors: z.array(z.unknown()),
  }),
)

export const deadLettersResponse = z.lazy(() =>
  z.object({
    deadLetters: z.array(deadLetterRow),
    nextCursor: z.string().nullable(),
  }),
)

export const deadLetterRetryResponse = z.lazy(() =>
  z.object({
    requeued: z.array(z.string()).meta({ description: 'Ids of the dead letters now jobs again.' }),
    kept: z
      .array(
        z.object({
          id: z.string(),
          reason: z.string().meta({ example: 'unique key sync:42 held by job 1234' }),
        }),
      )
      .meta({ description: 'Dead letters left in place, each with the reason.' }),
    ids: z
      .array(z.string())
      .meta({ description: 'The same as `requeued` (the answer before `kept` existed).' }),
  }),
)
