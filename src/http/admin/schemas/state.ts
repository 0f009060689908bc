/** The state routes' schemas: overview, drains, locks, database, events, stats, health. */
import * as z from 'zod'
import { nameSchema } from '../../../names.js'
import { limitSchema, ts, wholeNumberSchema } from './common.js'

export const statsQuery = z
  .object({
    queue: z.optional(nameSchema),
    sinceMs: wholeNumberSchema(1, 2_592_000_000, 'must be a whole number of ms').optional(),
    slowest: limitSchema(1000, 10),
  })
  .strict()

export const invocationRow = z.lazy(() =>
  z.object({
    id: z.string(),
    queues: z.array(z.string()),
    priority: z.number(),
    startedAt: ts,
    expiresAt: ts,
    jobsDone: z.number(),
    live: z.boolean(),
  }),
)

export const invocationsResponse = z.lazy(() => z.object({ invocations: z.array(invocationRow) }))

export const overviewResponse = z.lazy(() =>
  z.object({
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
          description: 'ready, scheduled or retrying is estimated from a sample of a large jobs table',
        }),
        margin: z
          .object({
            ready: z.number().nullable(),
            scheduled: z.number().nullable(),
            retrying: z.number().nullable(),
          })
          .meta({
            description:
              'Per state: 0 where the count is exact; else the half-width of its ~95 % interval (two standard errors of the sample); null where the sample could not bound it, the count then being an exact lower bound',
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
  }),
)

export const locksResponse = z.lazy(() =>
  z.object({
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
  }),
)

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

export const databaseResponse = z.lazy(() =>
  z.object({
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
  }),
)

export const eventsResponse = z.lazy(() =>
  z.object({
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
    routedLastHour: z.number().meta({
      description:
        'Events of the last hour delivered to at least one subscriber, directly published or relayed',
    }),
    outbox: z.object({
      pending: z.number(),
      oldestPendingAgeSeconds: z.number(),
      publishedLastHour: z.number(),
    }),
  }),
)

const counts = () => ({ completed: z.number(), failed: z.number(), dead: z.number(), expired: z.number() })

export const statsResponse = z.lazy(() =>
  z.object({
    sinceMs: z.number(),
    summary: z.object({
      finished: z.number(),
      ...counts(),
      successRate: z.number().nullable(),
      avgDurationMs: z.number().nullable(),
      p95DurationMs: z.number().nullable(),
      avgWaitMs: z.number().nullable(),
      p95WaitMs: z.number().nullable(),
    }),
    statusCounts: z.object(counts()),
    throughput: z.array(z.object({ minute: z.string(), ...counts() })),
    slowest: z.array(
      z.object({
        name: z.string(),
        runs: z.number(),
        avgDurationMs: z.number(),
        p95DurationMs: z.number(),
        maxDurationMs: z.number(),
      }),
    ),
  }),
)

export const healthResponse = z.lazy(() =>
  z.object({
    ok: z.boolean(),
    database: z.enum(['ok', 'unreachable']),
    migrations: z.literal('required').optional(),
    message: z.string().optional(),
  }),
)
