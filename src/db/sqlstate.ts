/**
 * Every SQLSTATE Sluice reacts to, by name: code anywhere in src/ compares against these, never
 * against a raw five-character string. `SLU..` are Sluice's own, raised by its SQL functions.
 */
export const SQLSTATE = {
  /** Sluice: the input cannot be stored (a batch that does not exist or is already sealed). */
  SLUICE_INVALID: 'SLU00',
  /** Sluice: a uniqueness or concurrency control rejected the job (`onConflict: 'reject'`). */
  SLUICE_CONFLICT: 'SLU09',
  UNIQUE_VIOLATION: '23505',
  UNDEFINED_TABLE: '42P01',
  UNDEFINED_FUNCTION: '42883',
  INVALID_SCHEMA_NAME: '3F000',
  INVALID_CATALOG_NAME: '3D000',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK_DETECTED: '40P01',
  QUERY_CANCELED: '57014',
  ADMIN_SHUTDOWN: '57P01',
  CRASH_SHUTDOWN: '57P02',
  CANNOT_CONNECT_NOW: '57P03',
  TOO_MANY_CONNECTIONS: '53300',
} as const

/** SQLSTATE classes (the first two characters) Sluice reacts to. */
export const SQLSTATE_CLASS = {
  /** 08: connection exception. */
  CONNECTION_EXCEPTION: '08',
  /** 28: invalid authorization specification (bad user or password). */
  INVALID_AUTHORIZATION: '28',
} as const

export type SqlState = (typeof SQLSTATE)[keyof typeof SQLSTATE]

/** Whether `state` belongs to the class `cls` (one of SQLSTATE_CLASS). */
export const inClass = (
  state: string | undefined,
  cls: (typeof SQLSTATE_CLASS)[keyof typeof SQLSTATE_CLASS],
): boolean => state?.startsWith(cls) === true

/**
 * Whether `state` says Sluice's own SQL found no schema, table or function of its own: the
 * migrations were not applied to this database, or are older than this Sluice.
 */
export const schemaMissing = (state: string | undefined): boolean =>
  state === SQLSTATE.INVALID_SCHEMA_NAME ||
  state === SQLSTATE.UNDEFINED_TABLE ||
  state === SQLSTATE.UNDEFINED_FUNCTION
