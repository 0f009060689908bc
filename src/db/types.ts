/** A parameterised SQL statement: text with $n placeholders and the values bound to them. */
export interface Statement {
  readonly text: string
  readonly values: readonly unknown[]
}

export interface QueryResult<R> {
  rows: R[]
  rowCount: number
}

/** Anything that runs one statement: a pool, a client inside a caller's transaction, a PGlite transaction. */
export interface Queryable {
  query<R = Record<string, unknown>>(statement: Statement): Promise<QueryResult<R>>
}

export type DriverKind = 'pg' | 'neon-ws' | 'neon-http' | 'pglite'

/** The one database boundary every part of Sluice talks to. */
export interface Db extends Queryable {
  readonly kind: DriverKind
  /** True when `transaction()` gives an interactive transaction (not available over Neon's HTTP driver). */
  readonly interactiveTransactions: boolean
  /** Runs the statements atomically, in one transaction and (where the driver allows) one round trip. */
  batch(statements: readonly Statement[]): Promise<QueryResult<Record<string, unknown>>[]>
  /** Runs `fn` inside an interactive transaction. Throws UNSUPPORTED where the driver has none. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** What the query hook sees for every statement sent to the database. */
export interface QueryEvent {
  text: string
  values: readonly unknown[]
  durationMs: number
  rowCount: number | undefined
  error: unknown
  /** True for statements sent as part of an atomic batch (migrations). */
  batched: boolean
}

export type QueryHook = (event: QueryEvent) => void
