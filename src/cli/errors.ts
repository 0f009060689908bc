import { inClass, SQLSTATE, SQLSTATE_CLASS, schemaMissing } from '../db/sqlstate.js'
import { type ErrorCode, SluiceError } from '../errors.js'
/** Exit codes of the `sluice` CLI. */
export const EXIT = {
  OK: 0,
  /** The command ran and the operation failed (a database error, a failing maintenance task, ids not found). */
  FAILED: 1,
  /** Bad arguments, bad job input, an unknown job or queue, no config file. */
  USAGE: 2,
  /** The database cannot be reached, is busy (embedded, single-process), or lacks Sluice's migrations. */
  DATABASE: 3,
  /** Stopped by SIGINT (Ctrl-C) or SIGTERM before it was done. */
  INTERRUPTED: 130,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

export interface IssueLike {
  path: (string | number)[]
  message: string
}

/** An error the CLI explains itself: a sentence, a hint, an exit code. */
export class CliError extends SluiceError {
  readonly exitCode: ExitCode

  constructor(
    message: string,
    options: { code?: ErrorCode; exitCode?: ExitCode; hint?: string; issues?: IssueLike[] } = {},
  ) {
    super(options.code ?? 'FAILED', message, {
      ...(options.hint ? { hint: options.hint } : {}),
      ...(options.issues ? { issues: options.issues } : {}),
    })
    this.exitCode = options.exitCode ?? EXIT.FAILED
  }
}

export class UsageError extends CliError {
  constructor(message: string, hint?: string, issues?: IssueLike[]) {
    super(message, {
      code: 'USAGE',
      exitCode: EXIT.USAGE,
      ...(hint ? { hint } : {}),
      ...(issues ? { issues } : {}),
    })
  }
}

/** What is printed for a failure, and sent back by the dev server for a command run there. */
export interface Explained {
  code: string
  message: string
  hint?: string
  issues?: IssueLike[]
  exitCode: ExitCode
}

const USAGE_CODES = new Set(['INVALID_INPUT', 'INVALID_NAME', 'UNKNOWN_JOB', 'PAYLOAD_TOO_LARGE'])

function field(error: unknown, key: string): unknown {
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>)[key] : undefined
}

const MIGRATE_HINT = 'Run `sluice migrate` to create them.'

/**
 * Turns anything thrown into a sentence, a hint and an exit code. Sluice errors are
 * recognised by their `code` (the config may load its own copy of the library, so
 * `instanceof` is not relied on).
 */
export function explain(error: unknown): Explained {
  if (error instanceof CliError) {
    return {
      code: error.code,
      message: error.message,
      exitCode: error.exitCode,
      ...(error.hint ? { hint: error.hint } : {}),
      ...(error.issues?.length ? { issues: error.issues } : {}),
    }
  }
  const code = field(error, 'code')
  const message = error instanceof Error ? error.message : String(error)
  const hint = field(error, 'hint')
  const issues = field(error, 'issues')
  const base = {
    message,
    ...(typeof hint === 'string' ? { hint } : {}),
    ...(Array.isArray(issues) && issues.length ? { issues: issues as IssueLike[] } : {}),
  }
  if (typeof code !== 'string') return { code: 'FAILED', exitCode: EXIT.FAILED, ...base }
  if (USAGE_CODES.has(code)) return { code, exitCode: EXIT.USAGE, ...base }
  if (code === 'DATABASE_UNAVAILABLE') return { code, exitCode: EXIT.DATABASE, ...base }
  if (code === 'MIGRATIONS_REQUIRED') return { code, exitCode: EXIT.DATABASE, hint: MIGRATE_HINT, ...base }
  if (code === 'DATABASE_ERROR') {
    const state = String(field(error, 'sqlState') ?? '')
    // No such schema, table or function: the migrations were not applied (or were dropped).
    if (schemaMissing(state))
      return { code: 'MIGRATIONS_REQUIRED', exitCode: EXIT.DATABASE, ...base, hint: MIGRATE_HINT }
    // Authentication failed, or no such database: the server answers but cannot be used.
    if (inClass(state, SQLSTATE_CLASS.INVALID_AUTHORIZATION) || state === SQLSTATE.INVALID_CATALOG_NAME)
      return {
        code: 'DATABASE_UNAVAILABLE',
        exitCode: EXIT.DATABASE,
        ...base,
        hint: 'Check the user, password and database name in DATABASE_URL.',
      }
  }
  return { code, exitCode: EXIT.FAILED, ...base }
}
