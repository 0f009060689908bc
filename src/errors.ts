import * as z from 'zod/mini'
import en from 'zod/v4/locales/en.js'

// Sluice's schemas are zod/mini, which carries no messages of its own: English ones, unless the
// application configured a locale (zod classic configures English when it loads).
if (!z.config().localeError) z.config(en())

/** Stable, machine-readable error codes. Never match errors by message text. */
export type ErrorCode =
  | 'INVALID_INPUT'
  | 'INVALID_CONFIG'
  | 'INVALID_NAME'
  | 'UNKNOWN_JOB'
  | 'PAYLOAD_TOO_LARGE'
  | 'CONFLICT'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  /** A write to an admin API served read-only. */
  | 'READ_ONLY'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'NOT_FOUND'
  | 'UNSUPPORTED'
  | 'MIGRATIONS_REQUIRED'
  | 'DATABASE_UNAVAILABLE'
  | 'DATABASE_ERROR'
  | 'INTERNAL'
  /** Thrown by a handler (PermanentJobError): dead-letter the job, do not retry it. */
  | 'PERMANENT_FAILURE'
  /** A handler ran past its timeout. */
  | 'JOB_TIMEOUT'
  /** The drain's deadline (its platform's time) stopped a run: the attempt counts, the breaker does not. */
  | 'DRAIN_DEADLINE'
  /** Thrown by a handler (SlowDownError): retry later, and slow its admission partition down. */
  | 'SLOW_DOWN'
  /** A subscriber's event was already processed: the run ends as completed. */
  | 'ALREADY_PROCESSED'
  /** A job's re-run called its steps in another order than the run that recorded them. */
  | 'NON_DETERMINISM'
  /** A step's write was refused: the run no longer holds the job's lease. */
  | 'LEASE_LOST'
  /** A job that ctx.invoke enqueued was dead-lettered or cancelled: the invoke throws it. */
  | 'CHILD_FAILED'
  /** A step's or a job's result is larger than a result may be. */
  | 'RESULT_TOO_LARGE'
  // The CLI's own failures.
  | 'FAILED'
  | 'USAGE'
  | 'UNKNOWN_QUEUE'
  | 'DATABASE_BUSY'
  | 'LISTEN_FAILED'

export interface Issue {
  path: (string | number)[]
  message: string
  code?: string
}

/**
 * The one base error of Sluice. `code` is stable; the HTTP status each code answers with is
 * the HTTP layer's business (src/http/errors.ts).
 */
export class SluiceError extends Error {
  readonly code: ErrorCode
  readonly issues: Issue[] | undefined
  readonly hint: string | undefined

  constructor(
    code: ErrorCode,
    message: string,
    options: { issues?: Issue[]; hint?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = code
    this.issues = options.issues
    this.hint = options.hint
  }

  toJSON(): { code: ErrorCode; message: string; issues?: Issue[] } {
    return this.issues
      ? { code: this.code, message: this.message, issues: this.issues }
      : { code: this.code, message: this.message }
  }
}

export class ValidationError extends SluiceError {
  constructor(message: string, issues: Issue[] = [], code: ErrorCode = 'INVALID_INPUT') {
    super(code, message, { issues })
  }
}

export class ConfigError extends SluiceError {
  constructor(message: string, issues?: Issue[]) {
    super('INVALID_CONFIG', message, issues ? { issues } : {})
  }
}

/**
 * A name the caller sent, quoted for a message: at most 80 characters of it, so that an error
 * never echoes a hostile request's whole path or body back.
 */
export function quoted(name: string): string {
  return JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)
}

export class UnknownJobError extends SluiceError {
  constructor(name: string) {
    super('UNKNOWN_JOB', `No job named ${quoted(name)} is defined.`)
  }
}

/** Something named by the caller (an admission partition, …) does not exist. */
export class NotFoundError extends SluiceError {
  constructor(message: string, options: { hint?: string } = {}) {
    super('NOT_FOUND', message, options)
  }
}

export class PayloadTooLargeError extends SluiceError {
  constructor(bytes: number, limit: number) {
    super('PAYLOAD_TOO_LARGE', `Payload is ${bytes} bytes; the limit is ${limit} bytes.`)
  }
}

export class ConflictError extends SluiceError {
  constructor(message: string) {
    super('CONFLICT', message)
  }
}

export class UnsupportedError extends SluiceError {
  constructor(message: string) {
    super('UNSUPPORTED', message)
  }
}

/** A database error, with the SQLSTATE kept in `sqlState`. */
export class DatabaseError extends SluiceError {
  readonly sqlState: string | undefined
  constructor(
    message: string,
    options: { sqlState?: string; cause?: unknown; hint?: string; code?: ErrorCode } = {},
  ) {
    super(options.code ?? 'DATABASE_ERROR', message, {
      cause: options.cause,
      ...(options.hint ? { hint: options.hint } : {}),
    })
    this.sqlState = options.sqlState
  }
}

/** Thrown by a handler to dead-letter its job at once instead of retrying it. */
export class PermanentJobError extends SluiceError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('PERMANENT_FAILURE', message, options)
  }
}

/**
 * Thrown by a handler when the service it calls asks it to slow down (an HTTP 429 or 503 with
 * Retry-After): the job is retried after `retryAfterMs` (default 1 s, within its attempts), and
 * for a job under an admission policy its partition admits nothing until then and its adaptive
 * cap halves.
 */
export class SlowDownError extends SluiceError {
  readonly retryAfterMs: number
  constructor(
    message = 'The downstream service asked to slow down',
    options: { retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super('SLOW_DOWN', message, options.cause === undefined ? {} : { cause: options.cause })
    const ms = options.retryAfterMs
    this.retryAfterMs =
      typeof ms === 'number' && Number.isFinite(ms)
        ? Math.min(Math.max(0, Math.round(ms)), 86_400_000)
        : 1_000
  }
}

/**
 * An error as a failed attempt or step stores it: its name, message (at most 4,000 characters)
 * and, for Sluice's own errors, its code.
 */
export function describeError(error: unknown): { name: string; message: string; code?: string } {
  if (error instanceof SluiceError)
    return { name: error.name, message: error.message.slice(0, 4000), code: error.code }
  if (error instanceof Error) return { name: error.name, message: error.message.slice(0, 4000) }
  return { name: 'Error', message: String(error).slice(0, 4000) }
}

/** Converts zod issues (or anything shaped like them) into Sluice issues. */
export function toIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string; code?: string; expected?: unknown }[],
): Issue[] {
  return issues.map((issue) => ({
    path: issue.path.map((part) => (typeof part === 'number' ? part : String(part))),
    // zod says "expected nonoptional, received undefined" of a field that is missing.
    message:
      issue.code === 'invalid_type' && issue.expected === 'nonoptional' ? 'is required' : issue.message,
    ...(issue.code ? { code: issue.code } : {}),
  }))
}
