/**
 * The admin API's inputs and outputs as zod schemas: the routes validate with them and the
 * OpenAPI document is generated from them (z.toJSONSchema), so the two cannot drift apart.
 */
import * as z from 'zod'
import { jobFilterSchema } from '../../controls/bulk.js'
import { partitionCapSchema, partitionKeySchema, policyNameSchema } from '../../controls/partitions.js'
import { nameSchema } from '../../names.js'
import { JOB_STATES } from '../../sql/jobs.js'

const MAX_BIGINT = '9223372036854775807'

/** A row id (job, dead letter, batch) in a path or a query: a positive integer as text. */
export const idSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,18}$/, 'must be a positive integer')
  // Digits compare as text at equal length; zod runs this even after the regex failed.
  .refine(
    (s) => s.length < MAX_BIGINT.length || (s.length === MAX_BIGINT.length && s <= MAX_BIGINT),
    'must be at most 9223372036854775807',
  )
  .meta({ description: 'A positive integer, as a string (ids are 64-bit).' })

const limitSchema = (max: number, fallback: number) =>
  z
    .string()
    .regex(/^[0-9]{1,7}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1, 'must be at least 1').max(max, `must be at most ${max}`))
    .optional()
    .meta({ description: `At most this many, 1..${max}. Default ${fallback}.` })

const offsetSchema = z
  .string()
  .regex(/^[0-9]{1,9}$/, 'must be a whole number')
  .transform(Number)
  .optional()

// ---- Parameters ----

export const queueParams = z.object({ name: nameSchema }).strict()
export const taskParams = z.object({ task: nameSchema }).strict()
export const jobParams = z.object({ id: idSchema }).strict()
export const batchParams = z.object({ id: idSchema }).strict()
export const policyParams = z.object({ policy: policyNameSchema }).strict()
export const partitionParams = z.object({ policy: policyNameSchema, partition: partitionKeySchema }).strict()

export const jobsQuery = z
  .object({
    queue: nameSchema.optional(),
    name: nameSchema.optional(),
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

export const deadLettersQuery = z
  .object({
    queue: nameSchema.optional(),
    name: nameSchema.optional(),
    limit: limitSchema(1000, 100),
    cursor: idSchema.optional().meta({ description: 'The nextCursor of the previous page (newest first).' }),
  })
  .strict()

export const partitionsQuery = z.object({ limit: limitSchema(1000, 100), offset: offsetSchema }).strict()

export const recurringQuery = z
  .object({ task: nameSchema.optional(), limit: limitSchema(1000, 100) })
  .strict()

export const statsQuery = z
  .object({
    queue: nameSchema.optional(),
    sinceMs: z
      .string()
      .regex(/^[0-9]{1,10}$/, 'must be a whole number of ms')
      .transform(Number)
      .pipe(z.number().int().min(1).max(2_592_000_000))
      .optional(),
    slowest: limitSchema(1000, 10),
  })
  .strict()

export const deadLetterFilterBody = z
  .object({
    ids: z.array(idSchema).min(1).max(10_000).optional(),
    queue: nameSchema.optional(),
    name: nameSchema.optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
  })
  .strict()
  .refine((b) => b.ids !== undefined || b.queue !== undefined || b.name !== undefined, {
    message: 'name at least one of ids, queue, name (an empty filter would take every dead letter)',
  })

export const capBody = z.object({ cap: partitionCapSchema }).strict()

/** Bulk retry and cancel: the waiting jobs matching queue, name and state (one at least), at most limit (1,000). */
export const jobFilterBody = jobFilterSchema

export const purgeBody = z
  .object({ limit: z.number().int().min(1).max(10_000).optional() })
  .strict()
  .meta({ description: 'At most limit (default 10,000) jobs per call.' })

// ---- Responses ----

const ts = z.iso.datetime({ offset: true })
const lastError = z
  .looseObject({
    name: z.string().optional(),
    message: z.string().optional(),
    attempt: z.number().optional(),
  })
  .nullable()

export const errorBody = z.object({
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
})

export const okBody = z.object({ ok: z.literal(true) })

export const queueRow = z.object({
  queue: z.string(),
  ready: z.number(),
  delayed: z.number(),
  inFlight: z.number(),
  deadLettered: z.number(),
  oldestReadyAgeSeconds: z.number(),
  blocked: z.number(),
  paused: z.boolean(),
  breakerUntil: ts.nullable(),
})

export const queueStateRow = z.object({
  name: z.string(),
  paused: z.boolean(),
  pausedAt: ts.nullable(),
  breakerUntil: ts.nullable(),
  consecutiveFailures: z.number(),
  trips: z.number(),
  heldUntil: ts.nullable(),
  singleConsumer: z.boolean(),
  globalCap: z.number().nullable(),
  leaseHolder: z.string().nullable(),
  leaseExpiresAt: ts.nullable(),
})

export const queuesResponse = z.object({ queues: z.array(queueRow), states: z.array(queueStateRow) })

export const jobRow = z.object({
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

export const jobsResponse = z.object({ jobs: z.array(jobRow), nextCursor: z.string().nullable() })
export const jobResponse = jobRow.extend({ errors: z.array(z.unknown()) })

export const deadLetterRow = z.object({
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
})

export const deadLettersResponse = z.object({
  deadLetters: z.array(deadLetterRow),
  nextCursor: z.string().nullable(),
})
export const idsResponse = z.object({ ids: z.array(z.string()) })
export const purgeResponse = z.object({ purged: z.number() })
export const triggerResponse = z.object({ id: z.string().nullable(), status: z.string(), slot: ts })

export const recurringTasksResponse = z.object({
  tasks: z.array(
    z.object({
      task: z.string(),
      cron: z.string(),
      timezone: z.string(),
      job: z.string(),
      lastSlot: ts,
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
})

export const invocationRow = z.object({
  id: z.string(),
  queues: z.array(z.string()),
  priority: z.number(),
  startedAt: ts,
  expiresAt: ts,
  jobsDone: z.number(),
  live: z.boolean(),
})
export const invocationsResponse = z.object({ invocations: z.array(invocationRow) })

export const overviewResponse = z.object({
  now: ts,
  queues: z.array(
    z.object({
      queue: z.string(),
      ready: z.number(),
      scheduled: z.number(),
      retrying: z.number(),
      running: z.number(),
      blocked: z.number(),
      oldestReadyAgeSeconds: z.number(),
      estimated: z.boolean().meta({
        description: 'ready, scheduled and retrying are scaled up from a sample of a large jobs table',
      }),
    }),
  ),
  throughput: z.array(z.object({ minute: z.string(), completed: z.number(), failed: z.number() })),
  lastHour: z.object({ completed: z.number(), failed: z.number(), dead: z.number(), expired: z.number() }),
  deadLetters: z.object({ count: z.number(), estimated: z.boolean() }),
  drains: z.array(
    z.object({
      id: z.string(),
      queues: z.array(z.string()),
      startedAt: ts,
      expiresAt: ts,
      ageSeconds: z.number(),
      jobsDone: z.number(),
    }),
  ),
})

export const locksResponse = z.object({
  now: ts,
  uniqueLocks: z.array(
    z.object({
      key: z.string(),
      strategy: z.enum(['until-executed', 'while-executing']),
      state: z.enum(['queued', 'executing']),
      jobId: z.string(),
      owner: z.string().nullable(),
      acquiredAt: ts,
      ageSeconds: z.number(),
      expiresAt: ts,
    }),
  ),
  semaphores: z.array(
    z.object({
      key: z.string(),
      limit: z.number(),
      taken: z.number(),
      holders: z.array(z.string()),
      blocked: z.number(),
      expiresAt: ts,
    }),
  ),
  queueLeases: z.array(
    z.object({
      queue: z.string(),
      owner: z.string(),
      ageSeconds: z.number().nullable(),
      expiresAt: ts,
      live: z.boolean(),
    }),
  ),
})

export const databaseQuery = z
  .object({
    xminAge: z
      .string()
      .regex(/^[0-9]{1,10}$/, 'must be a whole number')
      .transform(Number)
      .optional()
      .meta({ description: 'Warn past this many transactions of xmin age. Default 10,000.' }),
    heldMs: z
      .string()
      .regex(/^[0-9]{1,10}$/, 'must be a whole number of ms')
      .transform(Number)
      .optional()
      .meta({ description: 'Warn when a transaction has held the horizon this long. Default 60,000.' }),
  })
  .strict()

export const databaseResponse = z.object({
  now: ts,
  tables: z.array(
    z.object({
      table: z.string(),
      liveTuples: z.number(),
      deadTuples: z.number(),
      bloat: z.number().nullable(),
      bytes: z.number(),
      lastAutovacuum: ts.nullable(),
      lastAutoanalyze: ts.nullable(),
      secondsSinceAutovacuum: z.number().nullable(),
      secondsSinceAutoanalyze: z.number().nullable(),
    }),
  ),
  horizon: z.array(
    z.object({
      kind: z.enum(['transaction', 'replication slot', 'prepared transaction']),
      pid: z.number().nullable(),
      name: z.string().nullable(),
      state: z.string().nullable(),
      applicationName: z.string().nullable(),
      query: z.string().nullable(),
      xminAge: z.number(),
      heldSeconds: z.number().nullable(),
    }),
  ),
  warning: z.string().nullable(),
})

export const eventsResponse = z.object({
  now: ts,
  subscribers: z.array(
    z.object({
      name: z.string(),
      pattern: z.string(),
      queue: z.string(),
      deliveriesLastHour: z.number(),
      processed: z.number(),
      lastDeliveryAt: ts.nullable(),
    }),
  ),
  outbox: z.object({
    pending: z.number(),
    oldestPendingAgeSeconds: z.number(),
    publishedLastHour: z.number(),
  }),
})

export const recurringRun = z.object({
  task: z.string(),
  slot: ts,
  jobId: z.string().nullable(),
  status: z.string().nullable(),
  enqueuedAt: ts,
  manual: z.boolean(),
})
export const recurringResponse = z.object({ runs: z.array(recurringRun) })

export const batchResponse = z.object({
  id: z.string(),
  total: z.number(),
  completed: z.number(),
  discarded: z.number(),
  sealed: z.boolean(),
  properties: z.unknown(),
  createdAt: ts,
  finishedAt: ts.nullable(),
})

export const policyRow = z.object({
  name: z.string(),
  queue: z.string(),
  globalMax: z.number().nullable(),
  partitions: z.number(),
  pending: z.number(),
  inFlight: z.number(),
  pausedPartitions: z.number(),
})
export const policiesResponse = z.object({ policies: z.array(policyRow) })

export const partitionRow = z.object({
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
})
export const partitionsResponse = z.object({ partitions: z.array(partitionRow) })

const counts = { completed: z.number(), failed: z.number(), dead: z.number(), expired: z.number() }
export const statsResponse = z.object({
  sinceMs: z.number(),
  summary: z.object({
    finished: z.number(),
    ...counts,
    successRate: z.number().nullable(),
    avgDurationMs: z.number().nullable(),
    p95DurationMs: z.number().nullable(),
    avgWaitMs: z.number().nullable(),
    p95WaitMs: z.number().nullable(),
  }),
  statusCounts: z.object(counts),
  throughput: z.array(z.object({ minute: z.string(), ...counts })),
  slowest: z.array(
    z.object({
      name: z.string(),
      runs: z.number(),
      avgDurationMs: z.number(),
      p95DurationMs: z.number(),
      maxDurationMs: z.number(),
    }),
  ),
})

export const healthResponse = z.object({ ok: z.boolean(), database: z.enum(['ok', 'unreachable']) })
