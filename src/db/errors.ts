import { DatabaseError } from '../errors.js'
import { inClass, SQLSTATE, SQLSTATE_CLASS } from './sqlstate.js'

/** The same table as SQLSTATE (./sqlstate.ts), under the name 0.1.0 exported publicly. */
export const PG = SQLSTATE

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
])

const DROPPED = /^(Connection terminated|timeout exceeded when trying to connect)/

function field(error: unknown, key: string): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[key] : undefined
}

/** Wraps whatever a driver threw into a DatabaseError carrying the SQLSTATE. */
export function toDatabaseError(error: unknown): DatabaseError {
  if (error instanceof DatabaseError) return error
  const code = field(error, 'code')
  const message = error instanceof Error ? error.message : String(error)
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    const unavailable =
      inClass(code, SQLSTATE_CLASS.CONNECTION_EXCEPTION) ||
      code === SQLSTATE.CANNOT_CONNECT_NOW ||
      code === SQLSTATE.ADMIN_SHUTDOWN
    return new DatabaseError(message, {
      sqlState: code,
      cause: error,
      ...(unavailable ? { code: 'DATABASE_UNAVAILABLE' } : {}),
    })
  }
  // pg's words for a connection that opened and then ended or stalled before a reply (a
  // restarting server, a proxy that dropped it), which carry no code.
  if (DROPPED.test(message))
    return new DatabaseError(`The connection to PostgreSQL ended: ${message}`, {
      cause: error,
      code: 'DATABASE_UNAVAILABLE',
    })
  // Node reports a refused connection to a host with several addresses as an AggregateError
  // whose first inner error carries the address.
  const inner = field(error, 'errors')
  const first = Array.isArray(inner) ? (inner[0] as unknown) : undefined
  const innerCode = field(first, 'code')
  const netCode = typeof code === 'string' ? code : typeof innerCode === 'string' ? innerCode : undefined
  if (netCode && CONNECTION_CODES.has(netCode)) {
    const source = first ?? error
    const address = field(source, 'address')
    const port = field(source, 'port')
    const where = address ? ` at ${String(address)}${port ? `:${String(port)}` : ''}` : ''
    return new DatabaseError(`Cannot reach PostgreSQL${where} (${netCode})`, {
      cause: error,
      code: 'DATABASE_UNAVAILABLE',
      hint: 'Is the server running, and is the database URL right?',
    })
  }
  return new DatabaseError(message, { cause: error })
}

export function sqlStateOf(error: unknown): string | undefined {
  if (error instanceof DatabaseError) return error.sqlState
  const code = field(error, 'code')
  return typeof code === 'string' ? code : undefined
}

/** Whether an error came from the database (it carries a SQLSTATE), as opposed to the caller's code. */
export function isDatabaseError(error: unknown): boolean {
  if (error instanceof DatabaseError) return true
  const code = field(error, 'code')
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
}

/** SQLSTATEs that say the statement did not take effect and may succeed if sent again. */
const TRANSIENT_STATES = new Set<string>([
  SQLSTATE.SERIALIZATION_FAILURE,
  SQLSTATE.DEADLOCK_DETECTED,
  SQLSTATE.ADMIN_SHUTDOWN,
  SQLSTATE.CRASH_SHUTDOWN,
  SQLSTATE.CANNOT_CONNECT_NOW,
  SQLSTATE.TOO_MANY_CONNECTIONS,
])

/**
 * Whether sending a statement again may succeed: the database could not be reached or the
 * connection broke before an answer (no SQLSTATE, or class 08), the server was shutting down
 * or starting, or it gave up on a conflict (serialization failure, deadlock). When the
 * connection broke, the statement may have committed: only statements that are safe to send
 * twice should be retried on this (settles are, being matched on lease tokens).
 */
export function isTransient(error: unknown): boolean {
  if (!(error instanceof DatabaseError)) return false
  if (error.code === 'DATABASE_UNAVAILABLE') return true
  const state = error.sqlState
  return (
    state === undefined || inClass(state, SQLSTATE_CLASS.CONNECTION_EXCEPTION) || TRANSIENT_STATES.has(state)
  )
}
