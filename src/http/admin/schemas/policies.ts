/** The admission policy and partition routes' schemas. */
import * as z from 'zod'
import { partitionCapSchema, partitionKeySchema, policyNameSchema } from '../../../controls/partitions.js'
import { limitSchema, offsetSchema, ts } from './common.js'

export const policyParams = z.object({ policy: policyNameSchema }).strict()

export const partitionParams = z.object({ policy: policyNameSchema, partition: partitionKeySchema }).strict()

export const partitionsQuery = z.object({ limit: limitSchema(1000, 100), offset: offsetSchema }).strict()

export const capBody = z.lazy(() => z.object({ cap: partitionCapSchema }).strict())

/**
 * A partition named in the body: every key can be sent this way, including those a path segment
 * cannot carry ("", ".", "..", keys with "/").
 */
const partitionField = () =>
  partitionKeySchema.check(z.meta({ description: 'The partition key, any string ("" included)' }))

export const partitionBody = z.object({ partition: partitionField() }).strict()

export const partitionCapBody = z.object({ partition: partitionField(), cap: partitionCapSchema }).strict()

export const policyRow = z.lazy(() =>
  z.object({
    name: z.string(),
    queue: z.string(),
    globalMax: z.number().nullable(),
    partitions: z.number(),
    pending: z.number(),
    inFlight: z.number(),
    pausedPartitions: z.number(),
  }),
)

export const policiesResponse = z.lazy(() => z.object({ policies: z.array(policyRow) }))

export const partitionRow = z.lazy(() =>
  z.object({
    partition: z.string(),
    pending: z.number(),
    inFlight: z.number(),
    tokens: z.number().nullable(),
    msUntilNextToken: z.number().nullable(),
    cap: z.number().nullable(),
    adaptiveCap: z.number().nullable(),
    ewmaLagMs: z.number().nullable(),
    paused: z.boolean(),
    capOverride: z.number().nullable(),
    slowUntil: ts.nullable(),
    lastEnqueuedAt: ts.nullable(),
    lastAdmittedAt: ts.nullable(),
    reason: z.string().nullable(),
  }),
)

export const partitionsResponse = z.lazy(() => z.object({ partitions: z.array(partitionRow) }))
