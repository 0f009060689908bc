/** The recurring-task routes' schemas. */
import * as z from 'zod'
import { nameSchema } from '../../../names.js'
import { limitSchema, ts } from './common.js'

export const taskParams = z.object({ task: nameSchema }).strict()

export const recurringQuery = z
  .object({ task: z.optional(nameSchema), limit: limitSchema(1000, 100) })
  .strict()

export const triggerResponse = z.lazy(() =>
  z.object({ id: z.string().nullable(), status: z.string(), slot: ts }),
)

export const recurringTasksResponse = z.lazy(() =>
  z.object({
    tasks: z.array(
      z.object({
        task: z.string(),
        cron: z.string(),
        timezone: z.string(),
        job: z.string(),
        lastSlot: ts,
        slotEnqueued: z.boolean(),
        nextSlot: ts.nullable(),
        lastRun: z
          .object({
            slot: ts,
            jobId: z.string().nullable(),
            status: z.string().nullable(),
            manual: z.boolean(),
            outcome: z.string().nullable(),
          })
          .nullable(),
      }),
    ),
  }),
)

export const recurringRun = z.lazy(() =>
  z.object({
    task: z.string(),
    slot: ts,
    jobId: z.string().nullable(),
    status: z.string().nullable(),
    enqueuedAt: ts,
    manual: z.boolean(),
  }),
)

export const recurringResponse = z.lazy(() => z.object({ runs: z.array(recurringRun) }))
