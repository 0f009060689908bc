import { type ClientLike, runOn } from './client.js'
import { isDatabaseError, toDatabaseError } from './errors.js'
import type { Db, QueryResult } from './types.js'

/** What Sluice needs of a `PGlite` instance (structural: the declarations never import the optional driver's). */
export interface PGliteLike extends ClientLike {
  transaction<T>(fn: (tx: ClientLike) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** A Db over an embedded PGlite instance. `close()` closes it only when `owned`. */
export function fromPglite(db: PGliteLike, options: { owned?: boolean } = {}): Db {
  const transaction: Db['transaction'] = async (fn) => {
    try {
      return await db.transaction((tx) => fn({ query: (statement) => runOn(tx, statement) }))
    } catch (error) {
      // The driver's errors carry a SQLSTATE; whatever `fn` threw itself passes through as is.
      throw isDatabaseError(error) ? toDatabaseError(error) : error
    }
  }
  return {
    kind: 'pglite',
    interactiveTransactions: true,
    query: (statement) => runOn(db, statement),
    batch: (statements) =>
      transaction(async (tx) => {
        const results: QueryResult<Record<string, unknown>>[] = []
        for (const statement of statements) results.push(await tx.query(statement))
        return results
      }),
    transaction,
    async close() {
      if (options.owned) await db.close()
    },
  }
}
