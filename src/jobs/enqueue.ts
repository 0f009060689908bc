import * as z from 'zod/mini'
import { fromClient, isClientLike } from '../db/client.js'
import { sqlStateOf } from '../db/errors.js'
import { SQLSTATE } from '../db/sqlstate.js'
import type { Queryable, Statement } from '../db/types.js'
import {
  ConfigError,
  ConflictError,
  PayloadTooLargeError,
  SluiceError,
  toIssues,
  UnknownJobError,
  ValidationError,
} from '../errors.js'
import { assertStorable, jsonPath, jsonProblem } from '../json.js'
import { assertName } from '../names.js'
import {
  type ControlledRow,
  enqueueControlled,
  enqueueMany as enqueueManySql,
  enqueueOne,
  isControlled,
  type NewJob,
} from '../sql/enqueue.js'
import { admissionRow, dedupeKey } from './admission.js'
import { assertContractMatches, isContract } from './contract.js'
import { type AnyJob, type JobShape, MAX_SCHEDULE_MS, prioritySchema } from './define.js'

export interface EnqueueOptions {
  /** Run no sooner than this many ms from now (the database's clock). */
  delay?: number
  /** Run no sooner than this moment, at most 10 years before or after now. Not with `delay`. */
  runAt?: Date | string
  /** 0..32767, lower runs first. Default: the job's priority. */
  priority?: number
  /** Make the job a member of this batch (from `createBatch`); the batch must not be sealed. */
  batch?: string
  /** A client inside the caller's own transaction (pg, Neon Pool client, PGlite transaction): the job commits or rolls back with it. */
  tx?: unknown
}

/** A moment within MAX_SCHEDULE_MS of now, either way: years 1 and 9999 are refused, not stored. */
const withinReach = (value: Date | string): boolean =>
  Math.abs(new Date(value).getTime() - Date.now()) <= MAX_SCHEDULE_MS
const REACH = {
  message: 'must be within 10 years of now, before or after',
  // Only of a moment: a value that is no date at all has said so already.
  when: (payload: { issues: readonly unknown[] }) => payload.issues.length === 0,
}

const delaySchema = () => z.optional(z.int().check(z.minimum(0), z.maximum(MAX_SCHEDULE_MS)))

/** `delay` and `runAt` both given: which one the caller meant is anyone's guess, so neither is taken. */
const notBoth = () =>
  z.refine<{ delay?: unknown; runAt?: unknown }>(
    (options) => options.delay === undefined || options.runAt === undefined,
    {
      path: ['runAt'],
      message: 'cannot be given with delay: pass one of delay (ms from now) and runAt (a moment)',
    },
  )

export const enqueueOptionsSchema = z.lazy(() =>
  z
    .strictObject({
      delay: delaySchema(),
      runAt: z.optional(
        z.union([z.date(), z.iso.datetime({ offset: true })]).check(z.refine(withinReach, REACH)),
      ),
      priority: z.optional(prioritySchema),
      batch: z.optional(z.string().check(z.regex(/^[0-9]{1,19}$/, 'must be a batch id'))),
      tx: z.optional(
        z.custom<unknown>(
          (v) => v === undefined || isClientLike(v),
          'must be a client with a query() method',
        ),
      ),
    })
    .check(notBoth()),
)

/** The JSON body of an HTTP enqueue (`POST /jobs/:name`): the input and the options a caller may set. */
export const enqueueRequestSchema = z.lazy(() =>
  z
    .strictObject({
      input: z.unknown(),
      delay: delaySchema(),
      runAt: z.optional(z.iso.datetime({ offset: true }).check(z.refine(withinReach, REACH))),
      priority: z.optional(prioritySchema),
    })
    .check(
      z.refine((body) => 'input' in body, {
        path: ['input'],
        message: 'is required (use null for no input)',
      }),
      notBoth(),
    ),
)

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
  if (!found) {
    // A name no job can have is INVALID_NAME; one that a job could have, UNKNOWN_JOB.
    if (typeof job === 'string') assertName('job', name)
    throw new UnknownJobError(name)
  }
  if ((found as { subscriber?: unknown }).subscriber !== undefined) {
    throw new ValidationError(`"${name}" is a subscriber: its jobs come from publish(), not enqueue().`, [
      { path: ['job'], message: 'is a subscriber' },
    ])
  }
  if (typeof job === 'string' || found === job) return found
  if (!isContract(job)) throw new UnknownJobError(name)
  assertContractMatches(job, found)
  return found
}

/**
 * The input as the job's schema accepts it, or a ValidationError whose message names the field
 * (`input.a.b[3]`): first anything PostgreSQL cannot store or nested too deep to walk safely
 * (see jsonProblem), then the schema. Issue paths start with `prefix`.
 */
export function validateInput(
  job: JobShape,
  input: unknown,
  prefix: readonly (string | number)[] = [],
): unknown {
  const context = `Invalid input for job "${job.name}"`
  assertStorable(input, 'input', context, prefix)
  const parsed = z.safeParse(job.input, input)
  if (parsed.success) return parsed.data
  const issues = toIssues(parsed.error.issues)
  throw new ValidationError(
    `${context} at ${jsonPath('input', issues[0]?.path ?? [])}: ${issues[0]?.message}`,
    issues.map((issue) => ({ ...issue, path: [...prefix, ...issue.path] })),
  )
}

/** How JSON.stringify writes a NUL or a lone surrogate (an escaped backslash can look alike). */
const UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/

/**
 * What enqueue stores: the schema's output as JSON, which the handler gets parsed again by the
 * same schema. A schema that refuses its own output (a transform that changes the type, or
 * z.date(), whose Date is stored as a string) would fail every run of the job: the enqueue
 * fails instead, before anything is written.
 */
function storedPayload(job: JobShape, output: unknown, maxPayloadBytes: number): string {
  const context = `The input schema of job "${job.name}"`
  let payload: string
  try {
    payload = JSON.stringify(output ?? null)
  } catch (error) {
    throw new ConfigError(`${context} returned a value JSON cannot hold: ${(error as Error).message}`)
  }
  // The input was walked before the schema saw it; this catches what a transform added.
  const problem = UNSTORABLE_ESCAPE.test(payload) ? jsonProblem(output) : null
  if (problem) {
    throw new ConfigError(
      `${context} returned a value that cannot be stored: ${jsonPath('input', problem.path)} ${problem.message}.`,
    )
  }
  // A UTF-16 unit is at most 3 bytes of UTF-8: most payloads need no counting.
  if (payload.length * 3 > maxPayloadBytes) {
    const bytes = encoder.encode(payload).length
    if (bytes > maxPayloadBytes) throw new PayloadTooLargeError(bytes, maxPayloadBytes)
  }
  const again = z.safeParse(job.input, JSON.parse(payload))
  if (!again.success) {
    const [first] = toIssues(again.error.issues)
    throw new ConfigError(
      `${context} refuses its own output (at ${jsonPath('input', first?.path ?? [])}: ${first?.message}), ` +
        'so its handler could never run. The stored input is the output of the schema, parsed again before ' +
        'each run: the schema must accept what it returns (z.coerce.date() rather than z.date(); a transform ' +
        'that changes the type belongs in the handler).',
    )
  }
  return payload
}

type ParsedOptions = z.output<typeof enqueueOptionsSchema>

function parseOptions(options: EnqueueOptions): ParsedOptions {
  const opts = enqueueOptionsSchema.safeParse(options)
  if (opts.success) return opts.data
  const issues = toIssues(opts.error.issues)
  throw new ValidationError(
    `Invalid enqueue options at ${jsonPath('', issues[0]?.path ?? []) || '(root)'}: ${issues[0]?.message}`,
    issues,
  )
}

/** Validates input and options and builds the row; throws before anything is written. */
export function prepare(
  job: JobShape,
  input: unknown,
  options: EnqueueOptions,
  maxPayloadBytes: number,
): NewJob {
  return buildRow(job, input, parseOptions(options), maxPayloadBytes)
}

function buildRow(job: JobShape, input: unknown, opts: ParsedOptions, maxPayloadBytes: number): NewJob {
  const accepted = validateInput(job, input)
  const payload = storedPayload(job, accepted, maxPayloadBytes)
  const { runAt, delay, priority, batch } = opts
  const row: NewJob = {
    queue: job.queue,
    name: job.name,
    payload,
    priority: priority ?? job.priority,
    maxAttempts: job.retry.maxAttempts,
    runAt: runAt === undefined ? null : new Date(runAt),
    delayMs: delay ?? 0,
  }
  if (batch) row.batchId = batch
  if (job.concurrency) {
    const { limit, ttl, onConflict } = job.concurrency
    row.concurrency = {
      key: controlKey(job, 'concurrency', job.concurrency.key, accepted),
      limit,
      ttlMs: ttl,
      onConflict,
    }
  }
  if (job.unique) {
    const { strategy, onConflict, ttl } = job.unique
    row.unique = {
      key: controlKey(job, 'unique', job.unique.key, accepted),
      strategy,
      onConflict,
      ttlMs: ttl,
    }
  }
  if (job.admission) {
    const refuse = (what: string, value: unknown): never => {
      const message = `The ${what} of job "${job.name}" returned ${JSON.stringify(value) ?? String(value)}, which it cannot use`
      throw new ValidationError(message, [{ path: [], message }])
    }
    row.admission = admissionRow(job.name, job.admission, accepted, refuse)
    const key = dedupeKey(job.name, job.admission, accepted, refuse)
    if (key !== null)
      row.unique = { key, strategy: 'until-executed', onConflict: 'discard', ttlMs: 86_400_000 }
  }
  return row
}

function controlKey(job: JobShape, kind: string, fn: (input: never) => string, input: unknown): string {
  const key = fn(input as never)
  if (typeof key !== 'string' || key.length === 0 || key.length > 512 || jsonProblem(key) !== null) {
    const rule = 'must be a string of 1-512 characters, without NUL or lone surrogates'
    throw new ValidationError(`The ${kind} key of job "${job.name}" ${rule}.`, [
      { path: [kind, 'key'], message: rule },
    ])
  }
  return key
}

export type EnqueueResult =
  | { id: string; status: 'enqueued' | 'blocked' }
  | { id: null; status: 'duplicate'; existingId: string }
  | { id: null; status: 'discarded' }

function asResult(row: ControlledRow): EnqueueResult {
  if (row.status === 'duplicate') return { id: null, status: 'duplicate', existingId: row.existing_id ?? '' }
  if (row.status === 'discarded') return { id: null, status: 'discarded' }
  return { id: row.id!, status: row.status }
}

function conflicts(error: unknown): never {
  const state = sqlStateOf(error)
  const message = error instanceof Error ? error.message : String(error)
  if (state === SQLSTATE.SLUICE_CONFLICT) throw new ConflictError(message)
  if (state === SQLSTATE.SLUICE_INVALID) throw new ValidationError(message, [{ path: ['batch'], message }])
  throw error
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
  const opts = parseOptions(options)
  return inputs.map((input, i) => {
    try {
      return buildRow(job, input, opts, maxPayloadBytes)
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

/** How a statement may be extended on its way out (the wake-up check rides along). */
export type StatementWrap = (statement: Statement) => Statement

/**
 * Writes the jobs in one statement; results in input order. The rows come from one
 * `prepare` or `prepareMany` call: one job, one set of options. `wake` is true when a `wrap`
 * added the wake-up check and this enqueue opened a new debounce window.
 */
export async function insert(
  on: Queryable,
  t: string,
  rows: readonly NewJob[],
  wrap: StatementWrap = (statement) => statement,
): Promise<{ results: EnqueueResult[]; wake: boolean }> {
  if (rows.length === 0) return { results: [], wake: false }
  const woke = (r: { wake?: boolean }[]): boolean => r.some((row) => row.wake === true)
  if (rows.some(isControlled)) {
    const result = await on
      .query<ControlledRow & { wake?: boolean }>(wrap(enqueueControlled(t, rows)))
      .catch(conflicts)
    const sorted = [...result.rows].sort((a, b) => Number(a.ord) - Number(b.ord))
    return { results: sorted.map(asResult), wake: woke(result.rows) }
  }
  const statement =
    rows.length === 1
      ? enqueueOne(t, rows[0]!)
      : enqueueManySql(
          t,
          rows[0]!,
          rows.map((row) => row.payload),
        )
  const result = await on.query<{ id: string; wake?: boolean }>(wrap(statement))
  const results = result.rows
    .map((r) => r.id)
    .sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))
    .map((id) => ({ id, status: 'enqueued' as const }))
  return { results, wake: woke(result.rows) }
}
