import type { Db, Queryable, QueryEvent, QueryHook, Statement } from './types.js'

function observe<R>(
  hook: QueryHook,
  statement: Statement,
  batched: boolean,
  run: () => Promise<{ rowCount: number } & R>,
): Promise<{ rowCount: number } & R> {
  const started = performance.now()
  const report = (rowCount: number | undefined, error: unknown): void => {
    const event: QueryEvent = {
      text: statement.text,
      values: statement.values,
      durationMs: performance.now() - started,
      rowCount,
      error,
      batched,
    }
    try {
      hook(event)
    } catch {
      // A throwing query hook must never break a database operation.
    }
  }
  return run().then(
    (result) => {
      report(result.rowCount, undefined)
      return result
    },
    (error: unknown) => {
      report(undefined, error)
      throw error
    },
  )
}

function instrumentQueryable(queryable: Queryable, hook: QueryHook): Queryable {
  return { query: (statement) => observe(hook, statement, false, () => queryable.query(statement)) }
}

/** Wraps a Db so that `hook` sees every statement it sends (used for tracing and statement counting). */
export function instrument(db: Db, hook: QueryHook | undefined): Db {
  if (!hook) return db
  return {
    ...db,
    kind: db.kind,
    interactiveTransactions: db.interactiveTransactions,
    query: (statement) => observe(hook, statement, false, () => db.query(statement)),
    async batch(statements) {
      const started = performance.now()
      const report = (statement: Statement, rowCount: number | undefined, error: unknown): void => {
        try {
          hook({ ...statement, durationMs: performance.now() - started, rowCount, error, batched: true })
        } catch {
          // A throwing query hook must never break a database operation.
        }
      }
      try {
        const results = await db.batch(statements)
        for (const [i, statement] of statements.entries()) report(statement, results[i]?.rowCount, undefined)
        return results
      } catch (error) {
        for (const statement of statements) report(statement, undefined, error)
        throw error
      }
    },
    transaction: (fn) => db.transaction((tx) => fn(instrumentQueryable(tx, hook))),
    close: () => db.close(),
  }
}
