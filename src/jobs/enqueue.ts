import { z } from 'zod'
import { fromClient, isClientLike } from '../db/client.js'
import type { Queryable } from '../db/types.js'
import { PayloadTooLargeError, toIssues, UnknownJobError, ValidationError } from '../errors.js'
import { enqueueMany as enqueueManySql, enqueueOne, type NewJob } from '../sql/enqueue.js'
import type { AnyJob } from './define.js'
import { prioritySchema } from './define.js'

export interface EnqueueOptions {
  /** Run no sooner than this many ms from now (the database's clock). */
  delay?: number
  /** Run no sooner than this moment. Wins over `delay`. */
  runAt?: Date | string
  /** 0..32767, lower runs first. Default: the job's priority. */
  priority?: number
  /** A client inside the caller's own transaction (pg, Neon Pool client, PGlite transaction): the job commits or rolls back with it. */
  tx?: unknown
}

export const enqueueOptionsSchema = z
  .object({
    delay: z
      .number()
      .int()
      .min(0)
      .max(10 * 365 * 86_400_000)
      .optional(),
    runAt: z.union([z.date(), z.iso.datetime({ offset: true })]).optional(),
    priority: prioritySchema.optional(),
    tx: z
      .custom<unknown>((v) => v === undefined || isClientLike(v), 'must be a client with a query() method')
      .optional(),
  })
  .strict()

const encoder = new TextEncoder()

export function resolveJob(jobs: ReadonlyMap<string, AnyJob>, job: AnyJob | string): AnyJob {
  const name = typeof job === 'string' ? job : job.name
  const found = jobs.get(name)
  if (!found || (typeof job !== 'string' && found !== job)) throw new UnknownJobError(name)
  return found
}

/** Validates input and options and builds the row; throws before anything is written. */
export function prepare(
  job: AnyJob,
  input: unknown,
  options: EnqueueOptions,
  maxPayloadBytes: number,
): NewJob {
  const opts = enqueueOptionsSchema.safeParse(options)
  if (!opts.success) {
    throw new ValidationError(
      `Invalid enqueue options: ${opts.error.issues[0]?.message}`,
      toIssues(opts.error.issues),
    )
  }
  const parsed = job.input.safeParse(input)
  if (!parsed.success) {
    const first = parsed.error.issues[0]
    const where = first?.path.length ? ` at ${first.path.join('.')}` : ''
    throw new ValidationError(
      `Invalid input for job "${job.name}"${where}: ${first?.message}`,
      toIssues(parsed.error.issues),
    )
  }
  // The input as given is stored; the handler sees it parsed again, transforms applied.
  const payload = JSON.stringify(input ?? null)
  const bytes = encoder.encode(payload).length
  if (bytes > maxPayloadBytes) throw new PayloadTooLargeError(bytes, maxPayloadBytes)
  const { runAt, delay, priority } = opts.data
  return {
    queue: job.queue,
    name: job.name,
    payload,
    priority: priority ?? job.priority,
    maxAttempts: job.retry.maxAttempts,
    runAt: runAt === undefined ? null : new Date(runAt),
    delayMs: delay ?? 0,
  }
}

export function target(db: Queryable, tx: unknown): Queryable {
  return tx === undefined ? db : isClientLike(tx) ? fromClient(tx) : db
}

export async function insertOne(on: Queryable, t: string, row: NewJob): Promise<string> {
  const { rows } = await on.query<{ id: string }>(enqueueOne(t, row))
  return rows[0]!.id
}

export async function insertMany(on: Queryable, t: string, rows: readonly NewJob[]): Promise<string[]> {
  if (rows.length === 0) return []
  const result = await on.query<{ id: string }>(enqueueManySql(t, rows))
  return result.rows.map((r) => r.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))
}
