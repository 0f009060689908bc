import type { Context } from 'hono'
import type * as z from 'zod/mini'
import { SluiceError, toIssues, UnknownJobError, ValidationError } from '../errors.js'
import type { JobShape } from '../jobs/define.js'
import {
  type EnqueueOptions,
  type EnqueueResult,
  enqueueRequestSchema,
  validateInput,
} from '../jobs/enqueue.js'
import { jsonPath } from '../json.js'
import { assertName } from '../names.js'
import { readJson } from './body.js'

/** Parses a request body with a zod schema; a failure is a 400 naming the first issue. */
export function parseBody<T>(schema: z.ZodMiniType<T>, body: unknown): T {
  const parsed = schema.safeParse(body)
  if (parsed.success) return parsed.data
  const issues = toIssues(parsed.error.issues)
  const path = issues[0]?.path ?? []
  const where = path.length ? ` at ${jsonPath('', path)}` : ''
  throw new ValidationError(`Invalid request body${where}: ${issues[0]?.message}`, issues)
}

/**
 * The `POST …/:name` enqueue handler shared by the full app and the edge app: body
 * `{ input, delay?, runAt?, priority? }`; 202 with the result when a job was written
 * (enqueued, or blocked behind a concurrency limit), 200 when uniqueness or a limit's
 * discard policy made it a no-op; 400 with issue paths into the body, and INVALID_NAME for a
 * name no job can have; 404 for unknown jobs and for subscribers (their jobs come from publish).
 */
export function enqueueRoute(
  find: (name: string) => JobShape | undefined,
  enqueue: (job: JobShape, input: unknown, options: Omit<EnqueueOptions, 'tx'>) => Promise<EnqueueResult>,
  maxBodyBytes: number,
): (c: Context) => Promise<Response> {
  return async (c) => {
    // A name no job can have is a bad request (INVALID_NAME), not a job that is not defined.
    const name = assertName('job', c.req.param('name') ?? '')
    const job = find(name)
    if (!job) throw new UnknownJobError(name)
    // Before the body is read: a subscriber's input is the internal event envelope.
    const subscriber = (job as { subscriber?: { topic: string } }).subscriber
    if (subscriber)
      throw new SluiceError(
        'UNKNOWN_JOB',
        `"${name}" is a subscriber, not a job to enqueue: publish an event with POST /events/<topic> ` +
          `(it takes topics matching "${subscriber.topic}").`,
      )
    const body = parseBody(enqueueRequestSchema, await readJson(c, maxBodyBytes))
    // Checked here as well as in enqueue so that issue paths point into the request body.
    validateInput(job, body.input, ['input'])
    const result = await enqueue(job, body.input, {
      ...(body.delay === undefined ? {} : { delay: body.delay }),
      ...(body.runAt === undefined ? {} : { runAt: body.runAt }),
      ...(body.priority === undefined ? {} : { priority: body.priority }),
    })
    return c.json(result, result.id === null ? 200 : 202)
  }
}
