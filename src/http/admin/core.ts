/**
 * The app's own routes (enqueue, publish, drain, maintain) as the OpenAPI document describes
 * them, from the zod schemas those routes validate with. Their handlers live in app.ts.
 */
import * as z from 'zod'
import { publishRequestSchema } from '../../events/publish.js'
import { enqueueRequestSchema } from '../../jobs/enqueue.js'
import { nameSchema } from '../../names.js'
import { drainBodySchema } from '../drain-body.js'
import type { OperationSpec } from './operation.js'
import { errorBody } from './schemas.js'

const WRITE = ['bearer', 'signature'] as const

const failures = {
  400: { description: 'Invalid input', schema: errorBody },
  401: { description: 'Missing or invalid credentials', schema: errorBody },
  413: { description: 'Body too large', schema: errorBody },
  415: { description: 'Body not declared JSON', schema: errorBody },
}

const enqueueResult = z.lazy(() =>
  z.union([
    z.object({ id: z.string(), status: z.enum(['enqueued', 'blocked']) }),
    z.object({ id: z.null(), status: z.literal('duplicate'), existingId: z.string() }),
    z.object({ id: z.null(), status: z.literal('discarded') }),
  ]),
)

const publishResult = z.lazy(() => z.object({ eventId: z.string(), jobs: z.number() }))

const drainSummary = z.lazy(() =>
  z.looseObject({
    invocationId: z.string(),
    queues: z.array(z.string()),
    claimed: z.number(),
    completed: z.number(),
    failed: z.number(),
    retried: z.number(),
    deadLettered: z.number(),
    expired: z.number(),
    handedBack: z.number(),
    suspended: z.number(),
    lostLeases: z.number(),
    remainingReady: z.number(),
    stoppedBy: z.string(),
    durationMs: z.number(),
  }),
)

const maintenanceReport = z.lazy(() =>
  z.object({
    ranAt: z.string(),
    tasks: z.array(
      z.object({
        task: z.string(),
        ran: z.boolean(),
        rows: z.number(),
        ms: z.number(),
        error: z.string().optional(),
      }),
    ),
  }),
)

const topicParams = z
  .object({ topic: z.string().meta({ description: 'Dot-separated segments, e.g. `order.created`.' }) })
  .strict()

export const coreOperations: readonly OperationSpec[] = [
  {
    method: 'post',
    path: '/jobs/:name',
    summary: 'Enqueue a job',
    tags: ['app'],
    security: WRITE,
    params: z.object({ name: nameSchema }).strict(),
    body: enqueueRequestSchema,
    bodyExample: { input: { to: 'ada@example.com' }, delay: 5000 },
    responses: {
      200: { description: 'A no-op: a duplicate, or discarded by a limit', schema: enqueueResult },
      202: {
        description: 'Written (enqueued, or blocked behind a concurrency limit)',
        schema: enqueueResult,
      },
      ...failures,
      404: { description: 'No such job', schema: errorBody },
    },
  },
  {
    method: 'post',
    path: '/events/:topic',
    summary: 'Publish an event to the subscribers of its topic',
    tags: ['app'],
    security: WRITE,
    params: topicParams,
    body: publishRequestSchema,
    bodyExample: { payload: { orderId: 42 } },
    responses: { 202: { description: 'Published', schema: publishResult }, ...failures },
  },
  {
    method: 'post',
    path: '/drain',
    summary: 'Run due jobs within a time budget',
    tags: ['app'],
    security: WRITE,
    body: drainBodySchema,
    bodyExample: { budgetMs: 1000 },
    responses: { 200: { description: 'What the drain did', schema: drainSummary }, ...failures },
  },
  ...(['get', 'post'] as const).map(
    (method): OperationSpec => ({
      method,
      path: '/maintain',
      summary: 'Run the maintenance tasks that are due',
      tags: ['app'],
      security: [...WRITE, 'cron'],
      responses: {
        200: { description: 'The tasks run', schema: maintenanceReport },
        401: failures[401],
      },
    }),
  ),
]
