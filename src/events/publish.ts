import * as z from 'zod/mini'
import { isClientLike } from '../db/client.js'
import type { Queryable } from '../db/types.js'
import { PayloadTooLargeError, toIssues, ValidationError } from '../errors.js'
import { MAX_SCHEDULE_MS } from '../jobs/define.js'
import { assertStorable, jsonPath, jsonProblem } from '../json.js'
import { type NewEvent, publishEvents, publishWithWake } from '../sql/publish.js'
import { type WakeOptions, wakeSoon, wakesOnWrite } from '../wake/send.js'
import { assertTopic } from './topics.js'

export interface PublishOptions {
  /** Identifies the event: a second publish with the same id (within the retention) writes nothing. Default: a random UUID. */
  eventId?: string
  /** Subscribers run it no sooner than this many ms from now (the database's clock). */
  delay?: number
  /** Passed to every subscriber as `ctx.event.headers`. */
  headers?: Record<string, string>
  /** A client inside the caller's own transaction (pg, Neon Pool client, PGlite transaction): the event commits or rolls back with it. */
  tx?: unknown
}

export interface PublishResult {
  eventId: string
  /** Subscriber jobs written: 0 when no subscription matched or the event id was published before. */
  jobs: number
}

export const eventIdSchema = z.lazy(() =>
  z.string().check(z.regex(/^[!-~]{1,200}$/, 'must be 1-200 visible ASCII characters')),
)

/**
 * An own `__proto__` key (JSON.parse makes one) is skipped by zod's record, so such a header
 * would vanish without a word: it is refused, by name, before the record is parsed. As the first
 * half of a pipe this is a transform, so the JSON Schema of the headers stays the record's.
 */
const noProtoKey = () =>
  z.transform((value: unknown, ctx) => {
    if (typeof value === 'object' && value !== null && Object.hasOwn(value, '__proto__'))
      ctx.issues.push({
        code: 'custom',
        input: value,
        path: ['__proto__'],
        message: 'is not a valid header name ("__proto__" cannot be kept as a key of the headers object)',
      })
    return value
  })

export const headersSchema = z.lazy(() =>
  z.pipe(
    noProtoKey(),
    z
      .record(
        z
          .string()
          .check(
            z.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'header names are 1-64 letters, digits, "_", ".", ":" or "-"'),
          ),
        z.string().check(
          z.maxLength(1024),
          z.refine(
            (value) => jsonProblem(value) === null,
            'must not contain NUL characters or lone surrogates',
          ),
        ),
      )
      .check(z.refine((headers) => Object.keys(headers).length <= 32, 'at most 32 headers')),
  ),
)

const delaySchema = () => z.optional(z.int().check(z.minimum(0), z.maximum(MAX_SCHEDULE_MS)))

export const publishOptionsSchema = z.lazy(() =>
  z.strictObject({
    eventId: z.optional(eventIdSchema),
    delay: delaySchema(),
    headers: z.optional(headersSchema),
    tx: z.optional(
      z.custom<unknown>((v) => v === undefined || isClientLike(v), 'must be a client with a query() method'),
    ),
  }),
)

/** The JSON body of an HTTP publish (`POST /events/:topic`). */
export const publishRequestSchema = z.lazy(() =>
  z
    .strictObject({
      payload: z.unknown(),
      eventId: z.optional(eventIdSchema),
      delay: delaySchema(),
      headers: z.optional(headersSchema),
    })
    .check(
      z.refine((body) => 'payload' in body, {
        path: ['payload'],
        message: 'is required (use null for no payload)',
      }),
    ),
)

const encoder = new TextEncoder()

/** Validates the topic, payload and options and builds the event; throws before anything is written. */
export function preparePublish(
  topic: string,
  payload: unknown,
  options: PublishOptions,
  maxPayloadBytes: number,
): NewEvent {
  assertTopic(topic)
  const opts = publishOptionsSchema.safeParse(options)
  if (!opts.success) {
    const issues = toIssues(opts.error.issues)
    throw new ValidationError(
      `Invalid publish options at ${jsonPath('', issues[0]?.path ?? []) || '(root)'}: ${issues[0]?.message}`,
      issues,
    )
  }
  assertStorable(payload, 'payload', `Invalid payload for topic "${topic}"`, ['payload'])
  let json: string
  try {
    json = JSON.stringify(payload ?? null) ?? 'null'
  } catch (error) {
    throw new ValidationError(`The payload cannot be serialised as JSON: ${(error as Error).message}`, [
      { path: ['payload'], message: 'not serialisable as JSON' },
    ])
  }
  const bytes = encoder.encode(json).length
  if (bytes > maxPayloadBytes) throw new PayloadTooLargeError(bytes, maxPayloadBytes)
  return {
    eventId: opts.data.eventId ?? crypto.randomUUID(),
    topic,
    payload: json,
    headers: opts.data.headers ?? {},
    delayMs: opts.data.delay ?? 0,
  }
}

/**
 * Publishes one event in one statement and, for each queue that opened a new debounce window,
 * wakes its drains without waiting. Events published inside a caller's transaction or not
 * due yet wake nobody: a drain could not see their jobs.
 */
export async function publishAndWake(
  on: Queryable,
  t: string,
  event: NewEvent,
  options: Readonly<WakeOptions>,
  inTransaction: boolean,
): Promise<PublishResult> {
  const check = wakesOnWrite(options) && !inTransaction && event.delayMs === 0
  const statement = check ? publishWithWake(t, [event], options.debounceMs) : publishEvents(t, [event])
  const { rows } = await on.query<{ queue: string; jobs: number; wake?: boolean }>(statement)
  for (const row of rows) if (row.wake === true) wakeSoon(options, row.queue)
  return { eventId: event.eventId, jobs: rows.reduce((sum, row) => sum + Number(row.jobs), 0) }
}
