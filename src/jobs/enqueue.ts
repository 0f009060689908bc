import * as z from 'zod'
import { fromClient, isClientLike } from '../db/client.js'
import type { Queryable } from '../db/types.js'
import { PayloadTooLargeError, SluiceError, toIssues, UnknownJobError, ValidationError } from '../errors.js'
import { enqueueMany as enqueueManySql, enqueueOne, type NewJob } from '../sql/enqueue.js'
import { assertContractMatches, isContract } from './contract.js'
import { type AnyJob, type JobShape, prioritySchema } from './define.js'

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

/** The JSON body of an HTTP enqueue (`POST /jobs/:name`): the input and the options a caller may set. */
export const enqueueRequestSchema = z
  .object({
    input: z.unknown(),
    delay: enqueueOptionsSchema.shape.delay,
    runAt: z.iso.datetime({ offset: true }).optional(),
    priority: enqueueOptionsSchema.shape.priority,
  })
  .strict()
  .refine((body) => 'input' in body, { path: ['input'], message: 'is required (use null for no input)' })

const encoder = new TextEncoder()

/**
 * The registered job for a name, a job definition or a contract. A definition must be
 * the registered one itself; a contract must agree with it (queue, priority, attempts).
 */
export function resolveJob<T extends JobShape = AnyJob>(
  jobs: ReadonlyMap<string, T>,
  job: JobShape | string,
): T {
  const name = typeof job === 'string' ? job : job.name
  const found = jobs.get(name)
  if (!found) throw new UnknownJobError(name)
  if (typeof job === 'string' || found === job) return found
  if (!isContract(job)) throw new UnknownJobError(name)
  assertContractMatches(job, found)
  return found
}

/** Validates input and options and builds the row; throws before anything is written. */
export function prepare(
  job: JobShape,
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

/**
 * `prepare` for each input of one enqueueMany call. Nothing is written unless every input
 * is valid; a failure's issue paths start with the index of the input that failed.
 */
export function prepareMany(
  job: JobShape,
  inputs: readonly unknown[],
  options: EnqueueOptions,
  maxPayloadBytes: number,
): NewJob[] {
  if (!Array.isArray(inputs)) throw new ValidationError('enqueueMany takes an array of inputs.')
  return inputs.map((input, i) => {
    try {
      return prepare(job, input, options, maxPayloadBytes)
    } catch (error) {
      if (error instanceof SluiceError && error.issues) {
        throw new ValidationError(
          `Input ${i}: ${error.message}`,
          error.issues.map((issue) => ({ ...issue, path: [i, ...issue.path] })),
        )
      }
      throw error
    }
  })
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
