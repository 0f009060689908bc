import { toDatabaseError } from './errors.js'
import type { Queryable, QueryResult, Statement } from './types.js'

/** The common shape of a pg `Pool`/`Client`/`PoolClient`, a Neon `Pool` client and a PGlite transaction. */
export interface ClientLike {
  query(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: unknown[]; rowCount?: number | null; affectedRows?: number }>
}

export async function runOn<R>(client: ClientLike, statement: Statement): Promise<QueryResult<R>> {
  try {
    const result = await client.query(statement.text, statement.values as unknown[])
    return {
      rows: result.rows as R[],
      rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length,
    }
  } catch (error) {
    throw toDatabaseError(error)
  }
}

/** Wraps a client the caller already holds (typically inside their own transaction). */
export function fromClient(client: ClientLike): Queryable {
  return { query: (statement) => runOn(client, statement) }
}

export function isClientLike(value: unknown): value is ClientLike {
  return typeof value === 'object' && value !== null && typeof (value as ClientLike).query === 'function'
}
