/** The queue routes' schemas. */
import * as z from 'zod'
import { nameSchema } from '../../../names.js'
import { ts } from './common.js'

export const queueParams = z.object({ name: nameSchema }).strict()

export const purgeBody = z.lazy(() =>
  z
    .object({ limit: z.number().int().min(1).max(10_000).optional() })
    .strict()
    .meta({ description: 'At most limit (default 10,000) jobs per call.' }),
)

export const queueRow = z.lazy(() =>
  z.object({
    queue: z.string(),
    ready: z.number(),
    delayed: z.number(),
    retrying: z.number().meta({ description: 'Of the delayed, those backing off before a retry' }),
    inFlight: z.number(),
    deadLettered: z.number(),
    oldestReadyAgeSeconds: z.number(),
    blocked: z.number(),
    paused: z.boolean(),
    breakerUntil: ts.nullable(),
  }),
)

export const queueStateRow = z.lazy(() =>
  z.object({
    name: z.string(),
    paused: z.boolean(),
    pausedAt: ts.nullable(),
    breakerUntil: ts.nullable(),
    consecutiveFailures: z.number(),
    trips: z.number(),
    heldUntil: ts.nullable(),
    singleConsumer: z.boolean(),
    globalCap: z.number().nullable(),
    archive: z.boolean(),
    leaseHolder: z.string().nullable(),
    leaseExpiresAt: ts.nullable(),
  }),
)

export const queuesResponse = z.lazy(() =>
  z.object({ queues: z.array(queueRow), states: z.array(queueStateRow) }),
)

export const purgeResponse = z.lazy(() => z.object({ purged: z.number() }))
