/** The job and batch routes' schemas. */
import * as z from 'zod'
import { jobFilterSchema } from '../../../controls/bulk.js'
import { nameSchema } from '../../../names.js'
import { ENDED_STATES, JOB_STATES } from '../../../sql/jobs.js'
import { idSchema, lastError, limitSchema, ts } from './common.js'

export const jobParams = z.object({ id: idSchema }).strict()

export const batchParams = z.object({ id: idSchema }).strict()

export const jobsQuery = z
  .object({
    queue: z.optional(nameSchema),
    name: z.optional(nameSchema),
    state: z.enum(JOB_STATES).optional(),
    limit: limitSchema(1000, 100),
    cursor: idSchema.optional().meta({ description: 'The nextCursor of the previous page.' }),
    since: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Only jobs enqueued at or after this moment (ISO 8601).' }),
    until: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Only jobs enqueued before this moment (ISO 8601).' }),
  })
  .strict()

/** Bulk retry and cancel: the waiting jobs matching queue, name and state (one at least), at most limit (1,000). */
export const jobFilterBody = jobFilterSchema

const jobRowObject = () =>
  z.object({
    id: z.string(),
    queue: z.string(),
    name: z.string(),
    state: z.enum(JOB_STATES),
    payload: z.unknown(),
    priority: z.number(),
    attempts: z.number(),
    maxAttempts: z.number(),
    runAt: ts,
    enqueuedAt: ts,
    lastError,
    policy: z.string().nullable(),
    partition: z.string().nullable(),
    batchId: z.string().nullable(),
    reason: z
      .string()
      .nullable()
      .meta({ description: 'Why it is not running now; null when it is ready and nothing stops it.' }),
  })

export const jobRow = z.lazy(jobRowObject)

export const jobsResponse = z.lazy(() =>
  z.object({ jobs: z.array(jobRow), nextCursor: z.string().nullable() }),
)

const jobAttempt = z.lazy(() =>
  z.object({
    attempt: z.number(),
    outcome: z.enum(['running', 'failed', 'completed', 'expired']),
    startedAt: ts.nullable().meta({
      description:
        'The end minus the duration (when the claim took it, while it runs); null when not recorded',
    }),
    endedAt: ts.nullable(),
    durationMs: z.number().nullable(),
    invocation: z.string().nullable().meta({ description: 'The drain invocation that ran it' }),
    error: z
      .object({ name: z.string().nullable(), message: z.string().nullable(), code: z.string().nullable() })
      .nullable(),
  }),
)

const jobStep = z.lazy(() =>
  z.object({
    seq: z.number().meta({ description: 'Its position, 0 first' }),
    name: z.string().meta({ description: 'Its name, with `:n` for the n-th repeat of a name' }),
    kind: z.enum(['run', 'sleep', 'event', 'invoke']),
    state: z.enum(['completed', 'waiting', 'failed']),
    attempts: z.number().meta({ description: 'How many runs tried it' }),
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
    durationMs: z.number().nullable(),
    wakeAt: z.string().nullable().meta({ description: "A sleep's end, or a wait's timeout" }),
    resultBytes: z.number().nullable().meta({ description: 'Bytes of its stored result (JSON)' }),
    error: z.unknown().nullable(),
    topic: z.string().nullable().meta({ description: 'What an event wait waits for' }),
    match: z.unknown().nullable(),
    childId: z.string().nullable().meta({ description: 'The job an invoke enqueued' }),
  }),
)

/** Cancel's options: what becomes of the waiting children the job invoked. */
export const cancelQuery = z
  .object({
    children: z.enum(['cancel', 'keep']).optional().meta({
      description:
        'The waiting children its ctx.invoke enqueued: cancelled with it (default), or left to run',
    }),
  })
  .strict()

export const jobResponse = jobRowObject().extend({
  state: z.enum([...JOB_STATES, ...ENDED_STATES]).meta({
    description:
      'Waiting or running (as in the list), or ended: completed and expired are archived, dead is a dead letter',
  }),
  errors: z.array(z.unknown()),
  runningIn: z.string().nullable().meta({ description: 'The drain invocation running it now' }),
  startedAt: ts
    .nullable()
    .meta({ description: 'When the claim took the running attempt; null unless it runs' }),
  endedAt: ts
    .nullable()
    .meta({ description: 'When it completed, expired or was dead-lettered; null until then' }),
  timeline: z.array(jobAttempt).meta({
    description:
      'Its attempts, oldest first: each failure its error history keeps (the last ten), then the running one or the one that ended it',
  }),
  result: z.unknown().nullable().meta({
    description: "The handler's return value (JSON), for a completed job; null otherwise",
  }),
  steps: z
    .array(jobStep)
    .meta({ description: 'Its durable steps in call order; empty for a job without steps' }),
})

export const batchResponse = z.lazy(() =>
  z.object({
    id: z.string(),
    total: z.number(),
    completed: z.number(),
    discarded: z.number(),
    sealed: z.boolean(),
    properties: z.unknown(),
    createdAt: ts,
    finishedAt: ts.nullable(),
  }),
)
