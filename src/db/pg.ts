import { type ClientLike, runOn } from './client.js'
import { toDatabaseError } from './errors.js'
import type { Db, Queryable, QueryResult } from './types.js'

// Structural types, so that the published declarations never import the optional driver's.
/** A client checked out of a pool (pg's `PoolClient`, a Neon `Pool`'s client). */
export interface CheckedOut extends ClientLike {
  release(error?: Error | boolean): void
  on?(event: 'error', listener: (error: Error) => void): unknown
  off?(event: 'error', listener: (error: Error) => void): unknown
}

/** What Sluice needs of a pg `Pool` (or a `Pool` from `@neondatabase/serverless`). */
export interface PoolLike extends ClientLike {
  connect(): Promise<CheckedOut>
  end(): Promise<void>
}

async function inTransaction<T>(pool: PoolLike, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  let client: CheckedOut
  try {
    client = await pool.connect()
  } catch (error) {
    throw toDatabaseError(error)
  }
  // A client whose ROLLBACK failed is in an unknown state: it is destroyed, not pooled.
  let broken: Error | undefined
  // The pool stops listening for a client's errors while it is checked out: a connection that
  // drops mid-transaction (the server restarted, the backend was terminated) would otherwise
  // crash the process with an unhandled 'error' event. The client is then broken, not pooled.
  const onError = (error: Error): void => {
    broken = error
  }
  client.on?.('error', onError)
  try {
    await runOn(client, { text: 'BEGIN', values: [] })
    const result = await fn({ query: (statement) => runOn(client, statement) })
    await runOn(client, { text: 'COMMIT', values: [] })
    return result
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError))
    })
    throw error
  } finally {
    client.off?.('error', onError)
    client.release(broken)
  }
}

/**
 * A Db over a node-postgres `Pool`, or a `Pool` from `@neondatabase/serverless`
 * (its WebSocket driver has the same API). `close()` ends the pool only when `owned`.
 */
export function fromPg(pool: PoolLike, options: { kind?: 'pg' | 'neon-ws'; owned?: boolean } = {}): Db {
  return {
    kind: options.kind ?? 'pg',
    interactiveTransactions: true,
    query: (statement) => runOn(pool, statement),
    batch: (statements) =>
      inTransaction(pool, async (tx) => {
        const results: QueryResult<Record<string, unknown>>[] = []
        for (const statement of statements) results.push(await tx.query(statement))
        return results
      }),
    transaction: (fn) => inTransaction(pool, fn),
    async close() {
      if (options.owned) await pool.end()
    },
  }
}

/** A Db over a Neon WebSocket `Pool` (interactive transactions included). */
export function fromNeonPool(pool: PoolLike, options: { owned?: boolean } = {}): Db {
  return fromPg(pool, { ...options, kind: 'neon-ws' })
}
