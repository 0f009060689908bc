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
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'NOT_FOUND'
  | 'UNSUPPORTED'
  | 'MIGRATIONS_REQUIRED'
  | 'DATABASE_UNAVAILABLE'
  | 'DATABASE_ERROR'
  | 'INTERNAL'

export interface Issue {
  path: (string | number)[]
  message: string
  code?: string
}

/** The one base error of Sluice. `code` is stable; `status` is the HTTP status it maps to. */
export class SluiceError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly issues: Issue[] | undefined
  readonly hint: string | undefined

  constructor(
    code: ErrorCode,
    message: string,
    options: { status?: number; issues?: Issue[]; hint?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = code
    this.status = options.status ?? 500
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
    super(code, message, { status: 400, issues })
  }
}

export class ConfigError extends SluiceError {
  constructor(message: string, issues?: Issue[]) {
    super('INVALID_CONFIG', message, { status: 500, ...(issues ? { issues } : {}) })
  }
}

export class UnknownJobError extends SluiceError {
  constructor(name: string) {
    super('UNKNOWN_JOB', `No job named "${name}" is defined.`, { status: 404 })
  }
}

export class PayloadTooLargeError extends SluiceError {
  constructor(bytes: number, limit: number) {
    super('PAYLOAD_TOO_LARGE', `Payload is ${bytes} bytes; the limit is ${limit} bytes.`, { status: 413 })
  }
}

export class ConflictError extends SluiceError {
  constructor(message: string) {
    super('CONFLICT', message, { status: 409 })
  }
}

export class UnsupportedError extends SluiceError {
  constructor(message: string) {
    super('UNSUPPORTED', message, { status: 501 })
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
      status: options.code === 'DATABASE_UNAVAILABLE' ? 503 : 500,
      cause: options.cause,
      ...(options.hint ? { hint: options.hint } : {}),
    })
    this.sqlState = options.sqlState
  }
}

/** Thrown by a handler to dead-letter its job at once instead of retrying it. */
export class PermanentJobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'PermanentJobError'
  }
}

/** Converts zod issues (or anything shaped like them) into Sluice issues. */
export function toIssues(
  issues: readonly { path: readonly PropertyKey[]; message: string; code?: string }[],
): Issue[] {
  return issues.map((issue) => ({
    path: issue.path.map((part) => (typeof part === 'number' ? part : String(part))),
    message: issue.message,
    ...(issue.code ? { code: issue.code } : {}),
  }))
}
