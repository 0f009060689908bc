import type { Context, ErrorHandler, NotFoundHandler } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { schemaMissing } from '../db/sqlstate.js'
import { DatabaseError, type ErrorCode, type Issue, SluiceError } from '../errors.js'

/** The one error body every route answers with. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; issues?: Issue[] }
}

/**
 * The one table from error code to HTTP status. Core errors carry a code only; every route,
 * the edge app and the platform adapters answer through onError, which looks the code up here.
 */
export const HTTP_STATUS: Readonly<Record<ErrorCode, ContentfulStatusCode>> = {
  INVALID_INPUT: 400,
  INVALID_NAME: 400,
  USAGE: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  READ_ONLY: 403,
  UNKNOWN_JOB: 404,
  UNKNOWN_QUEUE: 404,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INVALID_CONFIG: 500,
  MIGRATIONS_REQUIRED: 500,
  DATABASE_ERROR: 500,
  INTERNAL: 500,
  PERMANENT_FAILURE: 500,
  JOB_TIMEOUT: 500,
  DRAIN_DEADLINE: 500,
  SLOW_DOWN: 500,
  ALREADY_PROCESSED: 500,
  NON_DETERMINISM: 500,
  LEASE_LOST: 409,
  CHILD_FAILED: 500,
  RESULT_TOO_LARGE: 413,
  FAILED: 500,
  LISTEN_FAILED: 500,
  UNSUPPORTED: 501,
  DATABASE_UNAVAILABLE: 503,
  DATABASE_BUSY: 503,
}

/** The HTTP status a Sluice error answers with. */
export const statusOf = (error: SluiceError): ContentfulStatusCode => HTTP_STATUS[error.code] ?? 500

/** Said (in place of "Internal error.") when Sluice's own SQL finds its tables missing. */
const MIGRATE_MESSAGE =
  "Sluice's tables are missing from the database, or older than this Sluice: run `sluice migrate` against it."

const GENERIC_5XX: Record<number, string> = {
  501: 'Not supported here.',
  503: 'A service Sluice depends on is unavailable; try again later.',
}

function codeForStatus(status: number): ErrorCode {
  if (status === 401) return 'UNAUTHORIZED'
  if (status === 403) return 'FORBIDDEN'
  if (status === 404 || status === 405) return 'NOT_FOUND'
  if (status === 409) return 'CONFLICT'
  if (status === 413) return 'PAYLOAD_TOO_LARGE'
  if (status === 415) return 'UNSUPPORTED_MEDIA_TYPE'
  if (status === 501) return 'UNSUPPORTED'
  if (status === 503) return 'DATABASE_UNAVAILABLE'
  return status < 500 ? 'INVALID_INPUT' : 'INTERNAL'
}

function errorResponse(body: ErrorBody, status: number, headers?: Record<string, string>): Response {
  return Response.json(body, { status, ...(headers ? { headers } : {}) })
}

/**
 * An HTTP failure in the standard JSON shape. It is an HTTPException, so middleware that
 * throws it answers correctly even in an app that never installed Sluice's onError.
 */
export class HttpError extends HTTPException {
  readonly code: ErrorCode
  readonly headers: Record<string, string> | undefined

  constructor(
    status: ContentfulStatusCode,
    code: ErrorCode,
    message: string,
    headers?: Record<string, string>,
  ) {
    super(status, { message, res: errorResponse({ error: { code, message } }, status, headers) })
    this.code = code
    this.headers = headers
  }
}

export const unauthorized = (): HttpError =>
  new HttpError(401, 'UNAUTHORIZED', 'Missing or invalid credentials.', {
    'WWW-Authenticate': 'Bearer realm="sluice"',
  })

/** What the app reports about failures that are the server's fault (5xx). */
export type ErrorReporter = (error: unknown, c: Context) => void

export const defaultReporter: ErrorReporter = (error, c) => {
  console.error(`[sluice] ${c.req.method} ${c.req.path} failed:`, error)
}

/**
 * The code an error is answered with: its own, except for a statement that found Sluice's
 * schema, a table or a function missing. Only Sluice's own SQL runs on the way to an answer, so
 * that is a missing migration (the library itself keeps DATABASE_ERROR: your SQL may miss one too).
 */
function answeredCode(error: SluiceError): ErrorCode {
  return error instanceof DatabaseError && error.code === 'DATABASE_ERROR' && schemaMissing(error.sqlState)
    ? 'MIGRATIONS_REQUIRED'
    : error.code
}

/**
 * The single error mapping of the app. 4xx errors keep their message (it is written for the
 * caller); 5xx errors keep their code but get a fixed message, and the original goes to the
 * reporter, so connection strings, SQL and stack traces never reach the response.
 */
export function onError(report: ErrorReporter): ErrorHandler {
  return (error, c) => {
    // The client hung up (mid-body, typically): not a failure of ours, and nobody reads the answer.
    if (c.req.raw.signal?.aborted && !(error instanceof SluiceError) && !(error instanceof HTTPException))
      return errorResponse(
        {
          error: {
            code: 'INVALID_INPUT',
            message: 'The client closed the connection before the request was read.',
          },
        },
        400,
      )
    let status = 500
    let body: ErrorBody = { error: { code: 'INTERNAL', message: 'Internal error.' } }
    let headers: Record<string, string> | undefined
    if (error instanceof SluiceError) {
      status = statusOf(error)
      body = { error: { ...error.toJSON(), code: answeredCode(error) } }
    } else if (error instanceof HttpError) {
      status = error.status
      body = { error: { code: error.code, message: error.message } }
      headers = error.headers
    } else if (error instanceof HTTPException) {
      status = error.status
      body = { error: { code: codeForStatus(status), message: error.message || `HTTP ${status}` } }
    }
    if (status >= 500) {
      report(error, c)
      const message =
        body.error.code === 'MIGRATIONS_REQUIRED'
          ? MIGRATE_MESSAGE
          : (GENERIC_5XX[status] ?? 'Internal error.')
      body = { error: { code: body.error.code, message } }
    }
    return errorResponse(body, status, headers)
  }
}

export const notFound: NotFoundHandler = (c) =>
  errorResponse(
    { error: { code: 'NOT_FOUND', message: `No route for ${c.req.method} ${new URL(c.req.url).pathname}.` } },
    404,
  )

/** What `/health` answers with its 503: a schema that needs `sluice migrate`, or a database that does not answer. */
export function unhealthy(
  error: unknown,
):
  | { ok: false; database: 'ok'; migrations: 'required'; message: string }
  | { ok: false; database: 'unreachable' } {
  if (error instanceof SluiceError && error.code === 'MIGRATIONS_REQUIRED')
    return {
      ok: false,
      database: 'ok',
      migrations: 'required',
      message: `${error.message} ${error.hint ?? ''}`.trim(),
    }
  return { ok: false, database: 'unreachable' }
}
